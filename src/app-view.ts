/** Maps the daemon's live state onto the read-only views of home automation and the status page. */
import type { Config } from './config/schema.js';
import { zoneBandNow } from './jobs/zone-control.js';
import { comfortTargetC } from './core/zone-control.js';
import type { Plan, PlanSlot, ZoneOutcome } from './core/types.js';
import type { BillSummary } from './jobs/billing.js';
import type {
  BillView,
  ComfortView,
  DeviceView,
  EventView,
  FuseView,
  HomeView,
  JobHealthView,
  LimitView,
  PlanReportView,
  PlanView,
  ReservationView,
} from './view/model.js';
import type { HomeEvent } from './spark/event-normalise.js';
import type { ControlSnapshot } from './jobs/control-loop.js';
import type { DeviceWishes } from './jobs/home-state.js';
import type { SupervisedDevice } from './devices/supervisor.js';
import { heldByFuse } from './jobs/fuse-guard.js';
import { commandRanges } from './jobs/command-envelope.js';
import { explainSlots } from './app-view-why.js';
import type { OutboxSummary } from './store/types.js';
import type { PlanReportState } from './jobs/plan-reports.js';

/** The plan's first comfort deadline after `nowMs`, of one tank or (without `tankId`) of any. */
function nextComfort(plan: Plan, nowMs: number, tankId?: string): ComfortView | undefined {
  const outcomes = Object.entries(plan.tanks ?? {})
    .filter(([id]) => tankId === undefined || id === tankId)
    .flatMap(([, t]) => t.comfort ?? []);
  const c = outcomes.filter((x) => x.atMs > nowMs).sort((a, b) => a.atMs - b.atMs)[0];
  return c ? { atMs: c.atMs, tempC: c.tempC, label: c.label, plannedTempC: c.plannedTempC, met: c.met } : undefined;
}

const identifiedText: Record<string, string> = {
  idTag: 'by its id tag',
  card: 'by its RFID card',
  only: "the charger's only car",
  default: "the charger's default car",
};

/** What each car's need rests on; a home with several cars names each charger (and the car planned there). */
function evNeedsText(evs: NonNullable<Plan['evs']>): string | undefined {
  const entries = Object.entries(evs);
  const car = (e: (typeof entries)[number][1]): string =>
    e.vehicle ? `${e.vehicle.name} (${e.vehicle.id}, ${identifiedText[e.vehicle.identifiedBy] ?? e.vehicle.identifiedBy}), ` : '';
  if (entries.length <= 1) return entries[0] && `${car(entries[0][1])}${evNeedText(entries[0][1].needFrom)}`;
  return entries.map(([id, e]) => `${id}: ${car(e)}${evNeedText(e.needFrom)}`).join('; ');
}

function evNeedText(from: NonNullable<Plan['evs']>[string]['needFrom']): string {
  if ('socPct' in from) {
    const kwh = Math.max(0, ((from.targetSocPct - from.socPct) / 100) * from.capacityKwh);
    return `state of charge ${from.socPct.toFixed(0)} % → ${from.targetSocPct.toFixed(0)} % of ${from.capacityKwh.toFixed(0)} kWh: ${kwh.toFixed(1)} kWh into the battery`;
  }
  return `no state of charge known: today's energy estimate, ${from.estimateKwh.toFixed(1)} kWh into the battery`;
}

const outdoorText: Record<NonNullable<ZoneOutcome['outdoorSource']>, string> = {
  metno: "MET Norway's forecast",
  persistence: 'the last known outdoor temperature held (no forecast for these hours)',
  none: 'no outdoor temperature known (0 °C assumed)',
};

/** Each heated zone as the plan saw it: its room model, where it started and the outdoor temperatures it planned with. */
function zoneTexts(zones: NonNullable<Plan['zones']>, names: Record<string, string>): string[] {
  return Object.entries(zones).map(([id, z]) => {
    const m = z.model;
    const model = `${m.source === 'learned' ? 'learned' : 'default'} room model (heat loss ${m.heatLossKwPerK.toFixed(3)} kW/K, heat capacity ${m.heatCapacityKwhPerK.toFixed(2)} kWh/K, temperatures ±${m.errorK.toFixed(1)} K)`;
    const start = `${z.startTempC.toFixed(1)} °C ${z.tempSource === 'measured' ? 'measured' : "assumed (the band's lower edge: no reading)"}`;
    const outdoor = z.outdoorSource ? `; outdoor: ${outdoorText[z.outdoorSource]}` : '';
    return `${names[id] ?? id}: ${model}, from ${start}${outdoor}`;
  });
}

export function planView(plan: Plan, config: Config, fromMs: number): PlanView {
  const comfort = nextComfort(plan, fromMs);
  const slots = plan.slots.filter((s) => s.endMs > fromMs).slice(0, (48 * 60) / plan.slotMinutes);
  const evNeed = plan.evs ? evNeedsText(plan.evs) : undefined;
  const why = explainSlots(plan, slots, {
    fromMs,
    timezone: config.site.timezone,
    limitKw: config.site.locationLimitKw,
    frozenWindowMinutes: config.planner.frozenWindowMinutes,
    names: Object.fromEntries(config.devices.map((d) => [d.id, d.name ?? d.id])),
  });
  return {
    createdMs: plan.createdMs,
    mode: plan.mode,
    slotMinutes: plan.slotMinutes,
    currency: plan.currency,
    expectedCost: plan.cost,
    baselineCost: plan.baselineCost,
    incentive: plan.incentiveEarned,
    shortfalls: plan.shortfalls.map((s) => s.message),
    ...(comfort ? { nextComfort: comfort } : {}),
    ...(evNeed ? { evNeed } : {}),
    ...(plan.baseLoad ? { baseLoad: plan.baseLoad.note } : {}),
    ...(plan.zones ? { zones: zoneTexts(plan.zones, Object.fromEntries(config.devices.map((d) => [d.id, d.name ?? d.id]))) } : {}),
    ...reservationViews(plan, fromMs),
    slots: slots.map((s, i) => ({
      startMs: s.startMs,
      pricePerKwh: s.price,
      deltaPerKwh: s.delta,
      reason: s.reason,
      why: why[i]!,
      devices: Object.fromEntries([
        ...Object.entries(s.tanks ?? {}).map(([id, t]) => [id, { powerKw: t.powerKw, on: t.on, temperatureC: t.endTempC }]),
        ...Object.entries(s.evs ?? {}).map(([id, e]) => [id, { powerKw: e.powerKw, on: e.on, energyStateKwh: e.chargedKwh }]),
        ...Object.entries(s.zones ?? {}).map(([id, z]) => [id, { powerKw: z.powerKw, on: z.on, temperatureC: z.endTempC }]),
      ]),
    })),
  };
}

/** The plan's reservations that have not ended, as `{ reservations }`, or nothing. */
function reservationViews(plan: Plan, fromMs: number): { reservations?: ReservationView[] } {
  const ahead = (plan.reservations ?? []).filter((r) => r.endMs > fromMs);
  if (ahead.length === 0) return {};
  return {
    reservations: ahead.map((r) => ({
      eventId: r.eventId,
      startMs: r.startMs,
      endMs: r.endMs,
      maxKw: r.maxKw,
      kept: r.kept,
      insideKwh: r.insideKwh,
      beforeKwh: r.beforeKwh,
    })),
  };
}

export interface ViewSources {
  config: Config;
  nowMs: number;
  plan: Plan | null;
  control: ControlSnapshot | null;
  devices: ReadonlyMap<string, SupervisedDevice>;
  wishes: (id: string) => DeviceWishes;
  jobs: JobHealthView[];
  outbox: OutboxSummary;
  locationId: string;
  /** Events relevant to this home that apply now or later. */
  events: readonly HomeEvent[];
  /** Device id of each of this home's resource ids at the API. */
  resources: ReadonlyMap<string, string>;
  /** The vehicle identified at a charger now, by id (null: none or the charger's own model). */
  vehicleAt?: (chargerId: string) => string | null;
  bill?: BillSummary | null;
  /** The plan report's record (absent: plan reports are not sent, e.g. in fleet mode). */
  planReport?: PlanReportState | null;
}

/** The plan report part of the view's outbox: the last one accepted, and whether one waits. */
export function planReportOutbox(state: PlanReportState | null | undefined): { lastPlanReport?: PlanReportView; planReportPending?: boolean } {
  if (!state) return {};
  const sent = state.lastSent;
  const hours = sent?.payload.baseline.map((p) => Date.parse(p.timestamp)) ?? [];
  const sum = (points: readonly { kiloWattHours: number }[]): number => Math.round(points.reduce((a, p) => a + p.kiloWattHours, 0) * 1000) / 1000;
  return {
    ...(sent && hours.length > 0
      ? {
          lastPlanReport: {
            acceptedMs: sent.acceptedAtMs,
            reason: sent.reason,
            fromMs: Math.min(...hours),
            toMs: Math.max(...hours) + 3_600_000,
            hours: hours.length,
            baselineKwh: sum(sent.payload.baseline),
            flexibilityKwh: sum(sent.payload.flexibility),
          },
        }
      : {}),
    planReportPending: state.pending !== null,
  };
}

/** A command's departure, else the one the plan charges for (the car's configured schedule); none once past. */
function departureOf(commandMs: number | null, plannedMs: number | undefined, nowMs: number): { departure?: string } {
  const at = commandMs ?? (typeof plannedMs === 'number' && plannedMs > nowMs ? plannedMs : null);
  return at === null ? {} : { departure: new Date(at).toISOString() };
}

export function billView(b: BillSummary): BillView {
  const c = b.capacity;
  return {
    month: b.month,
    monthStartMs: b.monthStartMs,
    currency: b.currency,
    kwh: b.kwh,
    energy: b.energy,
    gridFee: b.gridFee,
    tax: b.tax,
    subsidy: b.subsidy,
    vat: b.vat,
    incentive: b.delta,
    total: b.total,
    hoursPriced: b.hoursPriced,
    hoursUnpriced: b.hoursUnpriced,
    capacity: c ? { measureKw: c.measureKw, stepUpToKw: c.stepUpToKw, marginKw: c.marginKw, fee: c.fee + c.vat } : null,
    baseline: { ...b.baseline },
    savings: b.savings,
    devices: b.devices,
  };
}

/** Most caps and events listed: enough for a week of hourly caps, small enough for one MQTT message. */
const listedMax = 24;

/** The caps of the events from `nowMs` on, each on the location or a device of this home. */
export function limitsOf(events: readonly HomeEvent[], resources: ReadonlyMap<string, string>, nowMs: number): LimitView[] {
  return events
    .flatMap((e) =>
      e.lpcCaps.flatMap((c): LimitView[] => {
        const endMs = c.startMs + c.durationMs;
        const deviceId = c.resourceId === null ? null : resources.get(c.resourceId);
        if (endMs <= nowMs || deviceId === undefined) return [];
        return [{ eventId: e.id, deviceId, capKw: c.maxKw, startMs: c.startMs, endMs, active: c.startMs <= nowMs }];
      }),
    )
    .sort((a, b) => a.startMs - b.startMs || a.capKw - b.capKw)
    .slice(0, listedMax);
}

/** The lowest and highest of `values`; undefined when there are none (a loop: an event may hold many points). */
function span(values: readonly number[]): { min: number; max: number } | undefined {
  if (values.length === 0) return undefined;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  return { min, max };
}

/** An event as the views show it: its window, and the caps or price deltas it sets on this home. */
function eventView(e: HomeEvent, resources: ReadonlyMap<string, string>): EventView {
  // A reservation's caps are shown as its caps: the event's type says they are only reserved.
  const caps = span([...e.lpcCaps, ...(e.lpcReservations ?? [])].map((c) => c.maxKw));
  const deviceIds = [
    ...new Set(
      e.lpcCaps.flatMap((c) => {
        const id = c.resourceId === null ? undefined : resources.get(c.resourceId);
        return id === undefined ? [] : [id];
      }),
    ),
  ];
  const delta = span(e.priceDeltas.map((p) => p.price));
  const first = e.priceDeltas[0];
  return {
    id: e.id,
    type: e.payloadType,
    startMs: e.startMs,
    endMs: e.endMs,
    ...(caps ? { capKw: caps } : {}),
    ...(deviceIds.length > 0 ? { deviceIds } : {}),
    ...(delta && first ? { priceDelta: { ...delta, unit: `${first.currency}/${first.energyUnit}` } } : {}),
  };
}

function eventsOf(events: readonly HomeEvent[], resources: ReadonlyMap<string, string>, nowMs: number): EventView[] {
  return events
    .filter((e) => e.endMs === null || e.endMs > nowMs)
    .map((e) => eventView(e, resources))
    .sort((a, b) => (a.startMs ?? 0) - (b.startMs ?? 0))
    .slice(0, listedMax);
}

/** The lowest active cap of a scope and the end of the last one that holds it (caps can chain). */
function activeCap(limits: readonly LimitView[], deviceId: string | null): { capKw: number; untilMs: number } | undefined {
  const active = limits.filter((l) => l.active && l.deviceId === deviceId);
  if (active.length === 0) return undefined;
  return { capKw: Math.min(...active.map((l) => l.capKw)), untilMs: Math.max(...active.map((l) => l.endMs)) };
}

/** The main fuse now: headroom per line from the fuse meter's phase currents, and whether it holds a charger. */
function fuseView(config: Config, control: ControlSnapshot | null): FuseView | undefined {
  const fuse = config.site.fuse;
  if (!fuse) return undefined;
  const currents = control?.readings.get(fuse.meter)?.phases?.currentsA ?? [];
  const held = control?.decision.setpoints.find((s) => s.kind === 'charger' && heldByFuse(s.reason));
  return {
    mainFuseA: fuse.mainFuseA,
    headroomA: Array.from({ length: fuse.phases }, (_, l) => (Number.isFinite(currents[l]) ? fuse.mainFuseA - currents[l]! : null)),
    limiting: held !== undefined,
    ...(held ? { reason: held.reason } : {}),
  };
}

/** The car at a charger as the views name it. */
function vehicleOf(config: Config, vehicleId: string | null): { vehicle?: { id: string; name: string } } {
  const v = vehicleId === null ? undefined : config.vehicles.find((x) => x.id === vehicleId);
  return v ? { vehicle: { id: v.id, name: v.name ?? v.id } } : {};
}

export function homeView(src: ViewSources): HomeView {
  const { config, plan, control, nowMs } = src;
  const limits = limitsOf(src.events, src.resources, nowMs);
  const slot = plan?.slots.find((s) => s.startMs <= nowMs && nowMs < s.endMs);
  const devices: DeviceView[] = config.devices.map((d) => {
    const r = control?.readings.get(d.id);
    const w = src.wishes(d.id);
    const tankLike = d.kind === 'hotWaterTank' || d.kind === 'heatPump';
    const plannedIn = (s: PlanSlot | undefined): boolean | undefined =>
      tankLike ? s?.tanks?.[d.id]?.on : d.kind === 'evCharger' ? s?.evs?.[d.id]?.on : d.kind === 'zone' ? s?.zones?.[d.id]?.on : undefined;
    const planned = tankLike || d.kind === 'evCharger' || d.kind === 'zone';
    const next = planned && plan ? plan.slots.find((s) => s.startMs > nowMs && plannedIn(s)) : undefined;
    const comfort = plan && tankLike ? nextComfort(plan, nowMs, d.id) : undefined;
    const ranges = commandRanges(d);
    const view: DeviceView = {
      id: d.id,
      name: d.name ?? d.id,
      kind: d.kind,
      ...(Object.keys(ranges).length > 0 ? { ranges } : {}),
      available: src.devices.get(d.id)?.health().state !== 'down',
      mode: w.mode === 'boost' && w.boostUntilMs !== null && w.boostUntilMs <= nowMs ? 'auto' : w.mode,
      plannedOn: plannedIn(slot) ?? false,
      ...(r?.temperatureC !== undefined ? { temperatureC: r.temperatureC } : {}),
      ...(r?.powerW !== undefined ? { powerW: r.powerW } : {}),
      ...(r?.energyKwh !== undefined ? { energyKwh: r.energyKwh } : {}),
      ...(next ? { nextStartMs: next.startMs } : {}),
      ...(tankLike ? { floorC: w.floorC ?? d.model.floorC } : {}),
      ...(comfort ? { nextComfort: comfort } : {}),
      ...(r === undefined ? { notReadYet: true as const } : {}),
      ...(src.devices.get(d.id)?.health().blockWithoutLease ? { blockWithoutLease: true as const } : {}),
    };
    const setpoint = control?.decision.setpoints.find((s) => s.kind === 'charger' && s.id === d.id);
    if (setpoint?.kind === 'charger') Object.assign(view, { currentLimitA: setpoint.currentA, fuseLimited: heldByFuse(setpoint.reason) });
    const sg = control?.decision.setpoints.find((s) => s.kind === 'heatPump' && s.id === d.id);
    if (sg?.kind === 'heatPump') view.sgReady = { state: sg.state, reason: sg.reason };
    if (d.kind === 'zone') {
      const preset = w.preset ?? 'comfort';
      const setpointC = src.devices.get(d.id)?.health().setpointC;
      const band = zoneBandNow(d, preset, nowMs, config.site.timezone);
      view.zone = {
        preset,
        ...band,
        frostC: d.frostC,
        targetC: setpointC ?? comfortTargetC(band),
        ...(setpointC !== undefined ? { setpointC } : {}),
      };
    }
    if (r?.phases) view.phaseCurrentsA = r.phases.currentsA;
    const cap = activeCap(limits, d.id);
    if (cap) Object.assign(view, { capKw: cap.capKw, capUntilMs: cap.untilMs });
    if (d.kind === 'evCharger') {
      view.ev = {
        plugged: r?.ev?.plugged ?? false,
        charging: r?.ev?.charging ?? false,
        ...(r?.ev?.socPct !== undefined ? { socPct: r.ev.socPct } : {}),
        ...(r?.ev?.sessionKwh !== undefined ? { sessionKwh: r.ev.sessionKwh } : {}),
        ...(r?.ev?.connectorStatus !== undefined ? { connectorStatus: r.ev.connectorStatus } : {}),
        ...vehicleOf(config, src.vehicleAt?.(d.id) ?? null),
        ...departureOf(w.departureMs, plan?.evs?.[d.id]?.departureMs, nowMs),
        ...(w.targetKwh !== null ? { targetKwh: w.targetKwh } : {}),
        ...(w.targetSocPct !== null ? { targetSocPct: w.targetSocPct } : {}),
        phases:
          (setpoint?.kind === 'charger' ? setpoint.phases : undefined) ?? (r?.ev?.phases === 1 || r?.ev?.phases === 3 ? r.ev.phases : d.model.phases),
      };
    }
    return view;
  });
  const locationCap = activeCap(limits, null);
  const capKw = locationCap ? Math.min(locationCap.capKw, control?.capKw ?? Infinity) : control?.capKw;
  const fuse = fuseView(config, control);
  return {
    location: {
      id: src.locationId,
      name: 'Home',
      limitKw: config.site.locationLimitKw,
      ...(control?.locationPowerW !== undefined ? { powerW: control.locationPowerW } : {}),
      ...(capKw !== undefined && capKw < config.site.locationLimitKw ? { lpcCapKw: capKw } : {}),
      ...(fuse ? { fuse } : {}),
    },
    price: slot
      ? {
          currency: plan!.currency,
          totalPerKwh: slot.price,
          spotPerKwh: typeof slot.spot === 'number' ? slot.spot : null,
          deltaPerKwh: slot.delta,
          source: slot.source,
        }
      : null,
    devices,
    plan: plan ? planView(plan, config, nowMs) : null,
    health: { ok: src.jobs.every((j) => j.ok), jobs: src.jobs },
    outbox: {
      pending: src.outbox.pending + src.outbox.sending,
      accepted: src.outbox.accepted,
      rejected: src.outbox.rejected,
      ...(src.outbox.oldestPendingDeadlineMs !== null ? { oldestDeadlineMs: src.outbox.oldestPendingDeadlineMs } : {}),
      ...planReportOutbox(src.planReport),
    },
    limits,
    events: eventsOf(src.events, src.resources, nowMs),
    bill: src.bill ? billView(src.bill) : null,
    nowMs,
  };
}
