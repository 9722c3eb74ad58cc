/**
 * `wattshift status --config FILE [--json]`: what the daemon knows and does, for set-up and
 * support. Reads the database read-only (a read-write open would put the daemon's in-flight
 * reports back to pending) and, when the status server is enabled, asks the running daemon for
 * device and job health.
 */
import { z } from 'zod';
import { systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { loadConfig } from '../config/load.js';
import { isWattshiftError } from '../errors.js';
import { loadRegistration, type Registration } from '../identity.js';
import { dateTime, fixed } from '../status/format.js';
import { eventStates, openStore, type OutboxSummary, type Store } from '../store/index.js';
import { exitCodeFor, exitCodes } from './exit-codes.js';
import { formatError } from './format-error.js';
import { readLatestPlan } from './stored-plan.js';
import { askDaemon, shownPlan, type DaemonAnswer, type ShownPlan } from './live-view.js';
import { readEnergyHistory, type EnergyHistory } from '../status/history.js';
import { renderHistory } from './status-history.js';
import { cliLogger } from './register.js';
import { eligibilityStateKey, eligibilityStateSchema, type EligibilityState } from '../registration.js';
import { configPathOf } from './args.js';
import { billView, planReportOutbox } from '../app-view.js';
import { billTariff, readBill } from '../jobs/billing.js';
import { billLines } from '../status/bill-section.js';
import { eventKind, eventText, windowText } from '../status/event-text.js';
import type { BillView, HomeView } from '../view/model.js';
import type { CliCommand, CliIo } from './types.js';
import { planReportQueue } from '../jobs/plan-reports.js';
import { planReportText } from '../status/plan-report-text.js';

export interface StatusReport {
  nowMs: number;
  database: string;
  registration: Registration | null;
  /** The latest check, by the daemon (at start and on eligibility events) or by `wattshift register`. */
  program: (EligibilityState & { checkedBy: 'daemon' | 'register' }) | null;
  events: {
    total: number;
    byState: Record<string, number>;
    last: { eventId: string; type: string; receivedAtMs: number; state: string; detail: string | null } | null;
  };
  outbox: OutboxSummary & { lastErrors: { eventId: string; kind: string; state: string; attempts: number; error: string; atMs: number }[] };
  /** The plan report: the last one the API accepted, and whether a newer one waits (empty before the first). */
  planReport?: Pick<HomeView['outbox'], 'lastPlanReport' | 'planReportPending'>;
  plan: {
    /** `daemon`: the plan the running daemon follows; `database`: its last stored copy. */
    origin: ShownPlan['origin'];
    fallbackReason?: string;
    createdMs: number;
    ageMinutes: number;
    mode: string;
    currency: string;
    stale: boolean;
    /** The slot covering now, when the plan has one. */
    current: {
      startMs: number;
      pricePerKwh: number;
      deltaPerKwh: number;
      /** The planner's reason, and the same in the user's words. */
      reason: string | null;
      why: string | null;
      devices: Record<string, { on: boolean; powerKw: number; temperatureC?: number }>;
    } | null;
  } | null;
  /** This month's bill so far, from the database (null without a main meter). */
  bill: BillView | null;
  daemon: DaemonAnswer;
  /** Metered energy by local day and month (status/history.ts). */
  history: EnergyHistory;
}

/** The month's bill from the stored hours and costs, as the daemon's view shows it. */
export function billStatus(store: Store, config: Config, nowMs: number): BillView | null {
  const subjects = config.devices.map((d) => (d.kind === 'meter' && d.model.main ? 'location' : `device:${d.id}`));
  const bill = readBill(store, config.site, billTariff(config), subjects, nowMs);
  return bill ? billView(bill) : null;
}

/** What the daemon keeps under the state key `eligibility` (src/jobs/home-tracker.ts). */
const daemonEligibilitySchema = z.looseObject({
  eligible: z.boolean().nullable(),
  enrolled: z.boolean().nullable(),
  checkedMs: z.number().nullable(),
});

function programOf(store: Pick<Store, 'getState'>): StatusReport['program'] {
  const byDaemon = store.getState('eligibility', daemonEligibilitySchema);
  const byRegister = store.getState(eligibilityStateKey, eligibilityStateSchema);
  if (byDaemon && byDaemon.checkedMs !== null && (!byRegister || byDaemon.checkedMs >= byRegister.checkedMs)) {
    return { eligible: byDaemon.eligible, enrolled: byDaemon.enrolled, checkedMs: byDaemon.checkedMs, error: null, checkedBy: 'daemon' };
  }
  return byRegister ? { ...byRegister, checkedBy: 'register' } : null;
}

/** Everything status shows from the store. */
export function collectStatus(store: Store, nowMs: number): Omit<StatusReport, 'daemon' | 'plan' | 'bill' | 'history'> {
  const events = store.listEvents();
  const byState: Record<string, number> = Object.fromEntries(eventStates.map((s) => [s, 0]));
  for (const e of events) byState[e.state] = (byState[e.state] ?? 0) + 1;
  const last = events.reduce<(typeof events)[number] | undefined>((a, e) => (a === undefined || e.receivedAtMs >= a.receivedAtMs ? e : a), undefined);
  const lastErrors = store
    .listReports({ states: ['pending', 'sending', 'rejected'] })
    .filter((r) => r.lastError !== null)
    .sort((a, b) => b.updatedAtMs - a.updatedAtMs)
    .slice(0, 5)
    .map((r) => ({ eventId: r.eventId, kind: r.kind, state: r.state, attempts: r.attempts, error: r.lastError!, atMs: r.updatedAtMs }));
  return {
    nowMs,
    database: store.path,
    registration: loadRegistration(store) ?? null,
    program: programOf(store),
    events: {
      total: events.length,
      byState,
      last: last
        ? {
            eventId: last.eventId,
            type: last.payloadType ?? last.notificationType ?? 'unknown',
            receivedAtMs: last.receivedAtMs,
            state: last.state,
            detail: last.stateDetail,
          }
        : null,
    },
    outbox: { ...store.outboxSummary(), lastErrors },
    planReport: planReportOutbox(planReportQueue(store).stored()),
  };
}

/** The plan part of the report: the slot covering now of the plan `plan` would show. */
export function planStatus(shown: ShownPlan | null, nowMs: number): StatusReport['plan'] {
  if (!shown) return null;
  const { view } = shown;
  const slot = view.slots.find((s) => s.startMs <= nowMs && nowMs < s.startMs + view.slotMinutes * 60_000);
  return {
    origin: shown.origin,
    ...(shown.fallbackReason ? { fallbackReason: shown.fallbackReason } : {}),
    createdMs: view.createdMs,
    ageMinutes: shown.ageMinutes,
    mode: view.mode,
    currency: view.currency,
    stale: shown.stale,
    current: slot
      ? {
          startMs: slot.startMs,
          pricePerKwh: slot.pricePerKwh,
          deltaPerKwh: slot.deltaPerKwh,
          reason: slot.reason ?? null,
          why: slot.why ?? null,
          devices: Object.fromEntries(
            Object.entries(slot.devices).map(([id, d]) => [
              id,
              { on: d.on, powerKw: d.powerKw, ...(d.temperatureC !== undefined ? { temperatureC: d.temperatureC } : {}) },
            ]),
          ),
        }
      : null,
  };
}

const yesNo = (v: boolean | null): string => (v === null ? 'unknown' : v ? 'yes' : 'no');

export function renderStatus(r: StatusReport, config: Config): string[] {
  const tz = config.site.timezone;
  const at = (ms: number): string => dateTime(ms, tz);
  const name = (id: string): string => config.devices.find((d) => d.id === id)?.name ?? id;
  const out: string[] = [`wattshift status at ${at(r.nowMs)} (${tz}), database ${r.database}`, ''];
  if (r.registration) {
    const reg = r.registration;
    out.push(`Registration: user ${reg.userId}, location ${reg.locationId}, since ${at(reg.registeredAtMs)}`);
    for (const [device, resource] of Object.entries(reg.resources)) out.push(`  resource ${resource} (${name(device)})`);
    out.push(`  webhook ${reg.webhookId ?? 'none'}`);
  } else {
    out.push('Registration: not registered (run `wattshift register --config FILE`)');
  }
  if (r.program) {
    out.push(
      `  eligible ${yesNo(r.program.eligible)}, enrolled ${yesNo(r.program.enrolled)} (checked by ${r.program.checkedBy === 'daemon' ? 'the daemon' : 'register'} ${at(r.program.checkedMs)}${r.program.error ? `; ${r.program.error}` : ''})`,
    );
  }
  out.push('');
  const counts = Object.entries(r.events.byState)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  out.push(`Events: ${r.events.total}${counts ? ` (${counts})` : ''}`);
  if (r.events.last) {
    const l = r.events.last;
    out.push(`  last: ${eventKind(l.type)}, received ${at(l.receivedAtMs)}, ${l.state}${l.detail ? ` (${l.detail})` : ''}`);
  }
  const o = r.outbox;
  out.push(`Outbox: pending ${o.pending}, sending ${o.sending}, accepted ${o.accepted}, rejected ${o.rejected}`);
  if (o.oldestPendingDeadlineMs !== null) out.push(`  oldest deadline ${at(o.oldestPendingDeadlineMs)}`);
  if (o.nextAttemptMs !== null) out.push(`  next attempt ${at(o.nextAttemptMs)}`);
  for (const e of o.lastErrors)
    out.push(`  ${e.state} ${e.kind} report of ${e.eventId} (${e.attempts} attempt${e.attempts === 1 ? '' : 's'}): ${e.error}`);
  const planLine = planReportText({ ...o, ...(r.planReport ?? {}) }, at);
  if (planLine !== null) out.push(`  ${planLine}`);
  out.push('');
  if (!r.plan) {
    out.push('Plan: none stored yet');
  } else {
    const p = r.plan;
    const origin =
      p.origin === 'daemon'
        ? 'live from the daemon'
        : `stored copy from the database, shown because ${p.fallbackReason ?? 'the daemon did not answer'}`;
    out.push(`Plan: ${p.mode}, made ${at(p.createdMs)} (${p.ageMinutes} min ago), ${origin}${p.stale ? '; ended: is the daemon running?' : ''}`);
    if (p.current) {
      const c = p.current;
      out.push(
        `  now (slot ${at(c.startMs)}): ${fixed(c.pricePerKwh, 3)} ${p.currency}/kWh, delta ${c.deltaPerKwh > 0 ? '+' : ''}${fixed(c.deltaPerKwh, 3)}`,
      );
      for (const [id, d] of Object.entries(c.devices)) {
        out.push(
          `  ${name(id)}: ${d.on ? `on ${fixed(d.powerKw, 1)} kW` : 'off'}${d.temperatureC !== undefined ? `, ${fixed(d.temperatureC, 0)} °C at slot end` : ''}`,
        );
      }
      const why = c.why ?? c.reason;
      if (why) out.push(`  why: ${why}`);
    } else {
      out.push('  no slot covers now');
    }
  }
  out.push('');
  if (r.bill) out.push('Bill:', ...billLines(r.bill).map((l) => `  ${l}`), '');
  out.push(...renderHistory(r.history), '');
  const d = r.daemon;
  if (!config.http.enabled) {
    out.push('Daemon: status server disabled in the config (http.enabled: false); device and job health unknown');
  } else if (!d.reachable || !d.view) {
    out.push(`Daemon: not reachable at ${d.url}${d.error ? ` (${d.error})` : ''}`);
  } else {
    const v = d.view;
    out.push(`Daemon: running at ${d.url}, ${v.health.ok ? 'healthy' : 'FAILING'}`);
    for (const j of v.health.jobs) {
      out.push(
        `  job ${j.name}: ${j.ok ? 'ok' : 'failing'}${j.lastError ? ` (last error ${j.lastError.code} at ${at(j.lastError.atMs)}: ${j.lastError.message})` : ''}`,
      );
    }
    for (const dev of v.devices) {
      const values = [
        dev.temperatureC !== undefined ? `${fixed(dev.temperatureC, 1)} °C` : null,
        dev.powerW !== undefined ? `${fixed(dev.powerW, 0)} W` : null,
        dev.energyKwh !== undefined ? `${fixed(dev.energyKwh, 2)} kWh` : null,
        dev.zone ? `preset ${dev.zone.preset}, band ${fixed(dev.zone.minC, 1)}–${fixed(dev.zone.maxC, 1)} °C` : null,
        dev.zone?.setpointC !== undefined ? `setpoint ${fixed(dev.zone.setpointC, 1)} °C` : null,
      ].filter((x) => x !== null);
      out.push(
        `  device ${dev.name} (${dev.id}): ${dev.available ? 'available' : 'DOWN'}, mode ${dev.mode}, planned ${dev.plannedOn ? 'on' : 'off'}${values.length ? `, ${values.join(', ')}` : ''}`,
      );
    }
    if (v.location.powerW !== undefined)
      out.push(
        `  location power ${fixed(v.location.powerW, 0)} W of ${v.location.limitKw} kW${v.location.lpcCapKw !== undefined ? `, LPC cap ${v.location.lpcCapKw} kW` : ''}`,
      );
    for (const l of v.limits) {
      out.push(
        `  ${l.active ? 'LIMIT' : 'coming limit'}: ${l.deviceId === null ? 'whole home' : name(l.deviceId)} at most ${fixed(l.capKw, 1)} kW, ${windowText(l.startMs, l.endMs, tz)}`,
      );
    }
    const names = Object.fromEntries(config.devices.map((dev) => [dev.id, dev.name ?? dev.id]));
    for (const e of v.events) out.push(`  event: ${eventText(e, tz, names)}`);
  }
  return out;
}

export const statusCommand: CliCommand = {
  name: 'status',
  summary: "show registration, events, outbox, the current plan slot and the daemon's health",
  usage: '--config FILE [--json]',
  options: { config: { type: 'string', short: 'c' }, json: { type: 'boolean' } },
  help: [
    "Reads the database read-only (safe while the daemon runs) and asks the daemon's status server",
    '(http section) for device and job health. --json prints one JSON object.',
    'Exit codes: 0 shown, 1 the database cannot be opened, 78 invalid config.',
  ],
  async run(args, io: CliIo) {
    const path = configPathOf(args, io, 'status');
    if (path === null) return exitCodes.usage;
    const { config, secrets } = loadConfig(path, io.env, { deferCredentials: true });
    // The daemon first: its clock and plan are what the page and MQTT show at this moment.
    const daemon = await askDaemon(config);
    const nowMs = daemon.view?.nowMs ?? systemClock.nowMs();
    let report: StatusReport;
    try {
      const store = openStore({ path: config.storage.path, readOnly: true, logger: cliLogger(io, secrets) });
      try {
        const plan = planStatus(
          shownPlan(daemon, () => readLatestPlan(store), config, nowMs),
          nowMs,
        );
        report = {
          ...collectStatus(store, nowMs),
          plan,
          bill: billStatus(store, config, nowMs),
          daemon,
          history: readEnergyHistory(store, config, nowMs),
        };
      } finally {
        store.close();
      }
    } catch (err) {
      for (const line of formatError(err)) io.stderr(line);
      if (isWattshiftError(err, 'STORE_OPEN_FAILED')) io.stderr('  has `wattshift register` or `wattshift run` created the database yet?');
      return exitCodeFor(err);
    }
    if (args.values.json === true) io.stdout(JSON.stringify(report));
    else for (const line of renderStatus(report, config)) io.stdout(line);
    return exitCodes.ok;
  },
};
