/**
 * What `plan` and `status` show comes from the running daemon (its `/api/view`, the same view the
 * status page and MQTT render) whenever it answers; only when it does not do they fall back to
 * the plan stored in the database, and then they say so, with its age.
 */
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { PlanView } from '../view/model.js';
import { request } from '../spark/request.js';
import { currentPlanView, type StoredPlan } from './stored-plan.js';

const slotDeviceSchema = z.looseObject({
  powerKw: z.number(),
  on: z.boolean(),
  temperatureC: z.number().optional(),
  energyStateKwh: z.number().optional(),
});
const planViewSchema = z.looseObject({
  createdMs: z.number(),
  mode: z.enum(['optimal', 'fallback']),
  slotMinutes: z.number().positive(),
  currency: z.string(),
  expectedCost: z.number(),
  baselineCost: z.number(),
  incentive: z.number(),
  shortfalls: z.array(z.string()),
  nextComfort: z.looseObject({ atMs: z.number(), tempC: z.number(), label: z.string(), plannedTempC: z.number(), met: z.boolean() }).optional(),
  baseLoad: z.string().optional(),
  reservations: z
    .array(
      z.looseObject({
        eventId: z.string(),
        startMs: z.number(),
        endMs: z.number(),
        maxKw: z.number(),
        kept: z.boolean(),
        insideKwh: z.number(),
        beforeKwh: z.number(),
      }),
    )
    .optional(),
  slots: z.array(
    z.looseObject({
      startMs: z.number(),
      pricePerKwh: z.number(),
      deltaPerKwh: z.number(),
      reason: z.string().optional(),
      why: z.string().optional(),
      devices: z.record(z.string(), slotDeviceSchema),
    }),
  ),
});

const jobSchema = z.looseObject({
  name: z.string(),
  ok: z.boolean(),
  lastError: z.looseObject({ code: z.string(), message: z.string(), atMs: z.number() }).optional(),
});

/** The parts of the daemon's `/api/view` (`HomeView`) the CLI shows. */
const daemonViewSchema = z.looseObject({
  nowMs: z.number(),
  devices: z.array(
    z.looseObject({
      id: z.string(),
      name: z.string(),
      kind: z.string(),
      available: z.boolean(),
      mode: z.string(),
      plannedOn: z.boolean(),
      temperatureC: z.number().optional(),
      powerW: z.number().optional(),
      energyKwh: z.number().optional(),
      zone: z
        .looseObject({ preset: z.string(), minC: z.number(), maxC: z.number(), frostC: z.number(), setpointC: z.number().optional() })
        .optional(),
    }),
  ),
  health: z.looseObject({ ok: z.boolean(), jobs: z.array(jobSchema) }),
  location: z.looseObject({ powerW: z.number().optional(), limitKw: z.number(), lpcCapKw: z.number().optional() }),
  plan: planViewSchema.nullable(),
  limits: z
    .array(
      z.looseObject({
        eventId: z.string(),
        deviceId: z.string().nullable(),
        capKw: z.number(),
        startMs: z.number(),
        endMs: z.number(),
        active: z.boolean(),
      }),
    )
    .default([]),
  events: z
    .array(
      z.looseObject({
        id: z.string(),
        type: z.string(),
        startMs: z.number().nullable(),
        endMs: z.number().nullable(),
        capKw: z.looseObject({ min: z.number(), max: z.number() }).optional(),
        deviceIds: z.array(z.string()).optional(),
        priceDelta: z.looseObject({ min: z.number(), max: z.number(), unit: z.string() }).optional(),
      }),
    )
    .default([]),
});
export type DaemonView = z.infer<typeof daemonViewSchema>;

export interface DaemonAnswer {
  url: string;
  reachable: boolean;
  error?: string;
  view?: DaemonView;
}

export function daemonUrl(http: Config['http']): string {
  const host = http.host === '0.0.0.0' ? '127.0.0.1' : http.host === '::' ? '::1' : http.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`;
}

/**
 * Asks the running daemon for its view; never throws. A stopped daemon refuses at once; the wait is
 * for a running one on a slow gateway (a Raspberry Pi 3 building its view while it plans).
 */
export async function queryDaemon(url: string, timeoutMs = 10_000): Promise<DaemonAnswer> {
  try {
    // undici's request, not fetch: fetch refuses some ports (the WHATWG "bad port" list).
    const res = await request(`${url}/api/view`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.body.text();
    if (res.statusCode !== 200) return { url, reachable: false, error: `HTTP ${res.statusCode}` };
    const parsed = daemonViewSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return { url, reachable: false, error: 'the answer is not a wattshift view' };
    return { url, reachable: true, view: parsed.data };
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : (e.code ?? e.message ?? String(err));
    return { url, reachable: false, error: why };
  }
}

/** The daemon's answer, or why there is none, for a config whose status server may be off. */
export async function askDaemon(config: Config): Promise<DaemonAnswer> {
  const url = daemonUrl(config.http);
  return config.http.enabled ? queryDaemon(url) : { url, reachable: false, error: 'status server disabled (http.enabled: false)' };
}

export interface ShownPlan {
  /** `daemon`: the plan it follows now; `database`: the last copy it stored (saved at most every 30 min). */
  origin: 'daemon' | 'database';
  /** Why the stored copy is shown (the daemon's answer). */
  fallbackReason?: string;
  view: PlanView;
  /** Minutes since the planner made it. */
  ageMinutes: number;
  /** The plan has no slot left (shown from its start). */
  stale: boolean;
}

/** The daemon's plan when it answers with one, else the stored plan (read only then), else null. */
export function shownPlan(daemon: DaemonAnswer, readStored: () => StoredPlan | undefined, config: Config, nowMs: number): ShownPlan | null {
  const ageOf = (createdMs: number): number => Math.max(0, Math.round((nowMs - createdMs) / 60_000));
  const live = daemon.view?.plan;
  if (live) {
    // The daemon sends its plan from its own now on; it is never stale while the daemon runs.
    return { origin: 'daemon', view: live as PlanView, ageMinutes: ageOf(live.createdMs), stale: false };
  }
  const stored = readStored();
  if (!stored) return null;
  const { view, stale } = currentPlanView(stored.plan, config, nowMs);
  const fallbackReason = daemon.reachable
    ? 'the daemon has no plan yet'
    : `the daemon is not reachable at ${daemon.url} (${daemon.error ?? 'no answer'})`;
  return { origin: 'database', fallbackReason, view, ageMinutes: ageOf(stored.plan.createdMs), stale };
}
