/**
 * The control loop's part for SG Ready heat pumps: each pump's state now (with its lock budget and
 * whether the slot is worth a lock), and the budget kept from the states applied. A refused lock is
 * logged once per refusal (`SG_LOCK_REFUSED`), not on every tick.
 */
import type { HeatPumpConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Plan } from '../core/types.js';
import type { Setpoint } from '../core/control.js';
import { afterState, emptyBudget, expensiveNow, lockAllowed, type HeatPumpNow, type LockBudget } from '../core/heat-pump.js';
import { localParts } from '../core/zoned-time.js';

type Base = Pick<HeatPumpNow, 'available' | 'mode' | 'temperatureC' | 'powerW' | 'slotEnergyKwh' | 'planned' | 'capKw' | 'sincePhaseReading'>;

export interface HeatPumpControl {
  now(cfg: HeatPumpConfig, base: Base, plan: Plan | null, nowMs: number): HeatPumpNow;
  /** Records the setpoints applied at `nowMs` (after the supervisor accepted them). */
  applied(setpoints: readonly Setpoint[], nowMs: number): void;
  /** A pump's lock budget today. */
  budget(id: string): LockBudget | undefined;
}

export function createHeatPumpControl(deps: { timezone: string; logger: Logger }): HeatPumpControl {
  const log = deps.logger.child({ component: 'heat-pump' });
  const budgets = new Map<string, LockBudget>();
  const refusing = new Set<string>();
  const dayOf = (ms: number): string => {
    const p = localParts(ms, deps.timezone);
    return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
  };
  return {
    now(cfg, base, plan, nowMs) {
      const m = cfg.model;
      const day = dayOf(nowMs);
      const budget = budgets.get(cfg.id) ?? emptyBudget(day);
      return {
        kind: 'heatPump',
        id: cfg.id,
        ...base,
        floorC: m.floorC,
        normalC: m.normalC,
        maxC: m.maxC,
        electricKw: m.electricKw,
        expensive: expensiveNow(plan, nowMs),
        lock: lockAllowed(budget, cfg.block, nowMs, day),
      };
    },
    applied(setpoints, nowMs) {
      const day = dayOf(nowMs);
      for (const s of setpoints) {
        if (s.kind !== 'heatPump') continue;
        budgets.set(s.id, afterState(budgets.get(s.id) ?? emptyBudget(day), s.state, nowMs, day));
        if (s.refused !== undefined && !refusing.has(s.id)) {
          refusing.add(s.id);
          log.info({ code: 'SG_LOCK_REFUSED', device: s.id, why: s.refused }, 'heat pump lock refused: its budget is spent; normal operation');
        } else if (s.refused === undefined) refusing.delete(s.id);
      }
    },
    budget: (id) => budgets.get(id),
  };
}
