import type { HaTopics, DeviceScalarField } from './topics.js';
import type { BillView, DeviceKind, DeviceView, HomeView, PlanReportView, PlanView } from '../view/model.js';

/** Payload of a scalar topic whose value is unknown; Home Assistant reads it as `unknown`. */
export const unknownPayload = 'None';

/** How far ahead the plan topic looks. */
export const planHorizonMs = 48 * 3600_000;

/** The scalar subtopics that make sense for each kind of device. */
export function fieldsForKind(kind: DeviceKind): readonly DeviceScalarField[] {
  switch (kind) {
    case 'hotWaterTank':
      return ['temperature', 'power', 'energy', 'mode', 'planned_on', 'next_start', 'floor', 'next_comfort', 'block_without_lease'];
    case 'evCharger':
      return [
        'power',
        'energy',
        'mode',
        'planned_on',
        'next_start',
        'plugged',
        'charging',
        'soc',
        'departure',
        'target_kwh',
        'target_soc',
        'current_limit',
        'fuse_limited',
        'session_energy',
        'connector_status',
        'vehicle',
        'phases',
      ];
    case 'meter':
      return ['power', 'energy', 'current_l1', 'current_l2', 'current_l3'];
    case 'solar':
      return ['power', 'energy'];
    case 'zone':
      return ['temperature', 'power', 'energy', 'planned_on', 'next_start', 'preset', 'target_temp', 'action'];
    case 'heatPump':
      return ['temperature', 'power', 'energy', 'mode', 'planned_on', 'next_start', 'floor', 'next_comfort', 'block_without_lease', 'sg_state'];
  }
}

type Scalar = string | number | boolean | null;

/** Rounded so that sensor noise below display precision does not cause a publish. */
function round(value: number | undefined, decimals: number): number | null {
  if (value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

function iso(ms: number | undefined): string | null {
  return ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString();
}

/** The device's scalar values by field (null = unknown). */
export function deviceValues(d: DeviceView): Record<DeviceScalarField, Scalar> {
  return {
    temperature: round(d.temperatureC, 1),
    power: round(d.powerW, 0),
    energy: round(d.energyKwh, 3),
    mode: d.mode,
    planned_on: d.plannedOn,
    next_start: iso(d.nextStartMs),
    floor: round(d.floorC, 1),
    next_comfort: iso(d.nextComfort?.atMs),
    plugged: d.ev?.plugged ?? null,
    charging: d.ev?.charging ?? null,
    soc: round(d.ev?.socPct, 0),
    departure: d.ev?.departure ?? null,
    target_kwh: round(d.ev?.targetKwh, 2),
    target_soc: round(d.ev?.targetSocPct, 0),
    block_without_lease: d.blockWithoutLease === true,
    current_limit: round(d.currentLimitA, 1),
    session_energy: round(d.ev?.sessionKwh, 3),
    connector_status: d.ev?.connectorStatus ?? null,
    vehicle: d.ev?.vehicle?.name ?? null,
    phases: d.ev?.phases ?? null,
    fuse_limited: d.fuseLimited ?? null,
    current_l1: round(d.phaseCurrentsA?.[0], 2),
    current_l2: round(d.phaseCurrentsA?.[1], 2),
    current_l3: round(d.phaseCurrentsA?.[2], 2),
    sg_state: d.sgReady?.state ?? null,
    preset: d.zone?.preset ?? null,
    target_temp: round(d.zone?.targetC, 1),
    action: d.zone ? ((d.powerW ?? (d.plannedOn ? 1 : 0)) > 0 ? 'heating' : 'idle') : null,
  };
}

function scalarPayload(v: Scalar): string {
  return v === null ? unknownPayload : String(v);
}

/** The plan as published: slots from the current one to 48 h ahead, times as ISO strings. */
export function planPayload(plan: PlanView, nowMs: number): unknown {
  const slotMs = plan.slotMinutes * 60_000;
  const slots = plan.slots
    .filter((s) => s.startMs + slotMs > nowMs && s.startMs < nowMs + planHorizonMs)
    .map((s) => ({
      start: new Date(s.startMs).toISOString(),
      price: round(s.pricePerKwh, 5),
      delta: round(s.deltaPerKwh, 5),
      ...(s.reason === undefined ? {} : { reason: s.reason }),
      devices: Object.fromEntries(
        Object.entries(s.devices).map(([id, d]) => [
          id,
          {
            on: d.on,
            power_kw: round(d.powerKw, 3),
            ...(d.temperatureC === undefined ? {} : { temperature: round(d.temperatureC, 1) }),
            ...(d.energyStateKwh === undefined ? {} : { energy_state_kwh: round(d.energyStateKwh, 3) }),
          },
        ]),
      ),
    }));
  return {
    slot_minutes: plan.slotMinutes,
    currency: plan.currency,
    expected_cost: round(plan.expectedCost, 2),
    baseline_cost: round(plan.baselineCost, 2),
    savings: round(plan.baselineCost - plan.expectedCost, 2),
    incentive: round(plan.incentive, 2),
    shortfalls: plan.shortfalls,
    next_comfort: plan.nextComfort
      ? {
          at: iso(plan.nextComfort.atMs),
          label: plan.nextComfort.label,
          temperature: plan.nextComfort.tempC,
          planned_temperature: round(plan.nextComfort.plannedTempC, 1),
          met: plan.nextComfort.met,
        }
      : null,
    reservations: (plan.reservations ?? []).map((r) => ({
      event_id: r.eventId,
      start: iso(r.startMs),
      end: iso(r.endMs),
      max_kw: r.maxKw,
      kept: r.kept,
      inside_kwh: round(r.insideKwh, 3),
      before_kwh: round(r.beforeKwh, 3),
    })),
    slots,
  };
}

/** The month's bill as published: money rounded to cents, energy to Wh, power to W. */
export function billPayload(b: BillView): unknown {
  const c = b.capacity;
  return {
    month: b.month,
    month_start: new Date(b.monthStartMs).toISOString(),
    currency: b.currency,
    kwh: round(b.kwh, 3),
    energy: round(b.energy, 2),
    grid_fee: round(b.gridFee, 2),
    tax: round(b.tax, 2),
    subsidy: round(b.subsidy, 2),
    vat: round(b.vat, 2),
    incentive: round(b.incentive, 2),
    total: round(b.total, 2),
    hours_priced: b.hoursPriced,
    hours_unpriced: b.hoursUnpriced,
    baseline: {
      total: round(b.baseline.total, 2),
      capacity_fee: round(b.baseline.capacityFee, 2),
      hours_from_plan: b.baseline.hoursFromPlan,
      hours_without_plan: b.baseline.hoursWithoutPlan,
    },
    savings: round(b.savings, 2),
    capacity: c
      ? {
          measure_kw: round(c.measureKw, 3),
          step_up_to_kw: c.stepUpToKw,
          margin_kw: c.marginKw === null ? null : round(c.marginKw, 3),
          fee: round(c.fee, 2),
        }
      : null,
    devices: b.devices.map((d) => ({ id: d.id, kwh: round(d.kwh, 3), total: round(d.total, 2) })),
  };
}

/** Published while there is no plan, so that templates reading the plan topic see nulls. */
const noPlanPayload = {
  slot_minutes: null,
  currency: null,
  expected_cost: null,
  baseline_cost: null,
  savings: null,
  incentive: null,
  shortfalls: [],
  next_comfort: null,
  slots: [],
};

/**
 * Every retained state message for a view, as topic → payload. Payloads never contain the
 * current time, so an unchanged state yields identical payloads and nothing is republished.
 */
export function stateMessages(t: HaTopics, view: HomeView): Map<string, string> {
  const out = new Map<string, string>();
  const loc = view.location;
  out.set(
    t.location,
    JSON.stringify({
      id: loc.id,
      name: loc.name,
      power: round(loc.powerW, 0),
      limit_kw: loc.limitKw,
      lpc_cap_kw: loc.lpcCapKw ?? null,
      fuse: loc.fuse
        ? {
            main_fuse_a: loc.fuse.mainFuseA,
            headroom_a: loc.fuse.headroomA.map((a) => (a === null ? null : round(a, 1))),
            limiting: loc.fuse.limiting,
            reason: loc.fuse.reason ?? null,
          }
        : null,
      limits: view.limits.map((l) => ({ device: l.deviceId, cap_kw: l.capKw, start: iso(l.startMs), end: iso(l.endMs), active: l.active })),
      events: view.events.map((e) => ({ id: e.id, type: e.type, start: iso(e.startMs ?? undefined), end: iso(e.endMs ?? undefined) })),
    }),
  );
  if (view.price) {
    const p = view.price;
    out.set(
      t.price,
      JSON.stringify({
        currency: p.currency,
        total: round(p.totalPerKwh, 5),
        spot: round(p.spotPerKwh ?? undefined, 5),
        delta: round(p.deltaPerKwh, 5),
        source: p.source,
      }),
    );
    out.set(t.priceTotal, scalarPayload(round(p.totalPerKwh, 5)));
    out.set(t.priceDelta, scalarPayload(round(p.deltaPerKwh, 5)));
  }
  out.set(t.plan, JSON.stringify(view.plan ? planPayload(view.plan, view.nowMs) : noPlanPayload));
  if (view.bill) out.set(t.bill, JSON.stringify(billPayload(view.bill)));
  out.set(
    t.health,
    JSON.stringify({
      ok: view.health.ok,
      jobs: view.health.jobs.map((j) => ({
        name: j.name,
        ok: j.ok,
        ...(j.lastError ? { last_error: { code: j.lastError.code, message: j.lastError.message, at: iso(j.lastError.atMs) } } : {}),
      })),
      outbox: {
        pending: view.outbox.pending,
        accepted: view.outbox.accepted,
        rejected: view.outbox.rejected,
        oldest_deadline: iso(view.outbox.oldestDeadlineMs),
        ...(view.outbox.planReportPending !== undefined
          ? { plan_report_pending: view.outbox.planReportPending, last_plan_report: planReportPayload(view.outbox.lastPlanReport) }
          : {}),
      },
    }),
  );
  for (const d of view.devices) {
    const values = deviceValues(d);
    const fields = fieldsForKind(d.kind);
    const json: Record<string, Scalar> = { name: d.name, kind: d.kind, available: d.available };
    for (const f of fields) {
      json[f] = values[f];
      // Before the first reading a value is not known yet: the last run's retained one stays
      // (publishing `None` made Home Assistant show the tank as unknown for a moment at start).
      if (values[f] === null && d.notReadYet) continue;
      out.set(t.deviceField(d.id, f), scalarPayload(values[f]));
    }
    if (d.kind !== 'meter' && d.kind !== 'solar') Object.assign(json, { cap_kw: d.capKw ?? null, cap_until: iso(d.capUntilMs) });
    out.set(t.device(d.id), JSON.stringify(json));
    out.set(t.deviceAvailability(d.id), d.available ? 'online' : 'offline');
  }
  return out;
}

/** The last plan report the API accepted, as the health topic states it (null before the first). */
function planReportPayload(r: PlanReportView | undefined): Record<string, Scalar> | null {
  if (!r) return null;
  return {
    accepted: iso(r.acceptedMs),
    reason: r.reason,
    from: iso(r.fromMs),
    to: iso(r.toMs),
    hours: r.hours,
    baseline_kwh: round(r.baselineKwh, 3),
    flexibility_kwh: round(r.flexibilityKwh, 3),
  };
}
