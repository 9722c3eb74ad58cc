/** Maps the daemon's live state onto the read-only views of home automation and the status page. */
import type { Config } from './config/schema.js';
import type { Plan } from './core/types.js';
import type { DeviceView, HomeView, JobHealthView, PlanView } from './ha/view.js';
import type { ControlSnapshot } from './jobs/control-loop.js';
import type { DeviceWishes } from './jobs/home-state.js';
import type { SupervisedDevice } from './devices/supervisor.js';
import type { OutboxSummary } from './store/types.js';

export function planView(plan: Plan, config: Config, fromMs: number): PlanView {
  const slots = plan.slots.filter((s) => s.endMs > fromMs).slice(0, (48 * 60) / plan.slotMinutes);
  const tankId = config.devices.find((d) => d.kind === 'hotWaterTank')?.id;
  const evId = config.devices.find((d) => d.kind === 'evCharger')?.id;
  return {
    createdMs: plan.createdMs,
    mode: plan.mode,
    slotMinutes: plan.slotMinutes,
    currency: plan.currency,
    expectedCost: plan.cost,
    baselineCost: plan.baselineCost,
    incentive: plan.incentiveEarned,
    shortfalls: plan.shortfalls.map((s) => s.message),
    slots: slots.map((s) => ({
      startMs: s.startMs,
      pricePerKwh: s.price,
      deltaPerKwh: s.delta,
      reason: s.reason,
      devices: {
        ...(tankId && s.tank ? { [tankId]: { powerKw: s.tank.powerKW, on: s.tank.on, temperatureC: s.tank.endTempC } } : {}),
        ...(evId && s.ev ? { [evId]: { powerKw: s.ev.powerKW, on: s.ev.on, energyStateKwh: s.ev.chargedKWh } } : {}),
      },
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
}

export function homeView(src: ViewSources): HomeView {
  const { config, plan, control, nowMs } = src;
  const slot = plan?.slots.find((s) => s.startMs <= nowMs && nowMs < s.endMs);
  const devices: DeviceView[] = config.devices.map((d) => {
    const r = control?.readings.get(d.id);
    const w = src.wishes(d.id);
    const planned = d.kind === 'hotWaterTank' ? 'tank' : d.kind === 'evCharger' ? 'ev' : null;
    const next = planned && plan ? plan.slots.find((s) => s.startMs > nowMs && s[planned]?.on) : undefined;
    const view: DeviceView = {
      id: d.id,
      name: d.name ?? d.id,
      kind: d.kind,
      available: src.devices.get(d.id)?.health().state !== 'down',
      mode: w.mode === 'boost' && w.boostUntilMs !== null && w.boostUntilMs <= nowMs ? 'auto' : w.mode,
      plannedOn: planned !== null && (slot?.[planned]?.on ?? false),
      ...(r?.temperatureC !== undefined ? { temperatureC: r.temperatureC } : {}),
      ...(r?.powerW !== undefined ? { powerW: r.powerW } : {}),
      ...(r?.energyKwh !== undefined ? { energyKwh: r.energyKwh } : {}),
      ...(next ? { nextStartMs: next.startMs } : {}),
      ...(d.kind === 'hotWaterTank' ? { floorC: w.floorC ?? d.model.floorC } : {}),
    };
    if (d.kind === 'evCharger') {
      view.ev = {
        plugged: r?.ev?.plugged ?? false,
        charging: r?.ev?.charging ?? false,
        ...(r?.ev?.socPct !== undefined ? { socPct: r.ev.socPct } : {}),
        ...(w.departureMs !== null ? { departure: new Date(w.departureMs).toISOString() } : {}),
        ...(w.targetKwh !== null ? { targetKwh: w.targetKwh } : {}),
        ...(w.targetSocPct !== null ? { targetSocPct: w.targetSocPct } : {}),
      };
    }
    return view;
  });
  const capKw = control?.capKw;
  return {
    location: {
      id: src.locationId,
      name: 'Home',
      limitKw: config.site.locationLimitKw,
      ...(control?.locationPowerW !== undefined ? { powerW: control.locationPowerW } : {}),
      ...(capKw !== undefined && capKw < config.site.locationLimitKw ? { lpcCapKw: capKw } : {}),
    },
    price: slot
      ? { currency: plan!.currency, totalPerKwh: slot.price, spotPerKwh: slot.price - slot.delta, deltaPerKwh: slot.delta, source: slot.source }
      : null,
    devices,
    plan: plan ? planView(plan, config, nowMs) : null,
    health: { ok: src.jobs.every((j) => j.ok), jobs: src.jobs },
    outbox: {
      pending: src.outbox.pending + src.outbox.sending,
      rejected: src.outbox.rejected,
      ...(src.outbox.oldestPendingDeadlineMs !== null ? { oldestDeadlineMs: src.outbox.oldestPendingDeadlineMs } : {}),
    },
    nowMs,
  };
}
