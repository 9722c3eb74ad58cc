/**
 * Why the plan does what it does in a slot, in the user's words ("one of the 8 cheapest hours left
 * before 06:30", "the tank is at its maximum"). The planner's own reason (prices with their rank,
 * `bound by tankMax, frozen`) stays in the views' `reason` for machines and support.
 */
import type { BindingConstraint, Plan, PlanSlot } from './core/types.js';
import { dayLabel, fixed, hhmm } from './status/format.js';

export interface WhyContext {
  /** The plan is explained from here on: slots before it are history, not choices left. */
  fromMs: number;
  timezone: string;
  /** Device names by id. */
  names: Readonly<Record<string, string>>;
  /** The location's power limit, kW. */
  limitKw: number;
  /** Slots starting this soon are kept from the previous plan (`planner.frozenWindowMinutes`). */
  frozenWindowMinutes: number;
}

const ordinal = (n: number): string => {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
};

/** What the device must be ready for after `slot`, if anything: a comfort deadline or the car's departure. */
function deadlineAfter(plan: Plan, id: string, kind: 'tank' | 'ev', slot: PlanSlot): { atMs: number; note: string } | null {
  if (kind === 'tank') {
    const c = (plan.tanks?.[id]?.comfort ?? []).filter((x) => x.atMs > slot.startMs).sort((a, b) => a.atMs - b.atMs)[0];
    return c ? { atMs: c.atMs, note: ` (for “${c.label}”)` } : null;
  }
  const leaves = plan.evs?.[id]?.departureMs;
  return leaves !== undefined && leaves > slot.startMs ? { atMs: leaves, note: '' } : null;
}

function bindingWords(b: BindingConstraint, slot: PlanSlot, plan: Plan, ctx: WhyContext): string | null {
  const tank = Object.keys(plan.tanks ?? {}).length > 1 ? 'a tank' : 'the tank';
  switch (b) {
    case 'locationLimit':
      return `the home's ${fixed(ctx.limitKw, 1)} kW limit is reached`;
    case 'lpc':
      return 'a power-limitation (LPC) cap holds it down';
    case 'reservedLpc':
      return 'a reserved power limit (LPC reservation) may hold it down, so the plan keeps it free';
    case 'tankMax':
      return `${tank} is at its maximum`;
    case 'tankFloor':
      return `${tank} is at its comfort floor`;
    case 'tankPower':
      return 'the heater runs at full power';
    case 'legionella':
      return 'the legionella cycle heats the tank';
    case 'evDeadline':
      return "the car's last hour before it leaves";
    case 'evPower':
      return 'the charger runs at full power';
    case 'antiCycling':
      return 'kept on to avoid switching on and off';
    case 'frozen':
      return slot.startMs <= ctx.fromMs
        ? 'kept from the last plan because the slot is under way'
        : `kept from the last plan because the slot starts within ${ctx.frozenWindowMinutes} minutes`;
    case 'fallback':
      return 'no price known: the default schedule';
    case 'capacityStep':
      return "held down to stay within the month's capacity step";
    // The comfort deadline is named with the tank's hours.
    case 'comfort':
      return null;
  }
}

/** What explains a slot with nothing on (a deadline or a floor is the hours' concern, not this one's). */
const idleReasons: ReadonlySet<BindingConstraint> = new Set(['tankMax', 'lpc', 'reservedLpc', 'locationLimit', 'capacityStep', 'frozen', 'fallback']);

/** One sentence per slot of `slots` (slots of `plan`), in their order. */
export function explainSlots(plan: Plan, slots: readonly PlanSlot[], ctx: WhyContext): string[] {
  const ahead = plan.slots.filter((s) => s.endMs > ctx.fromMs);
  const unit = plan.slotMinutes === 60 ? ['hour', 'hours'] : [`${plan.slotMinutes}-minute slot`, `${plan.slotMinutes}-minute slots`];
  const tz = ctx.timezone;

  const onIn = (s: PlanSlot, id: string, kind: 'tank' | 'ev'): boolean => (kind === 'tank' ? s.tanks?.[id]?.on : s.evs?.[id]?.on) === true;

  /** Where this slot's price stands among the slots left before the device's deadline. */
  function chosen(slot: PlanSlot, id: string, kind: 'tank' | 'ev'): string {
    if (slot.source === 'fallback') return 'on by the default schedule (no price known)';
    const due = deadlineAfter(plan, id, kind, slot);
    const window = ahead.filter((s) => due === null || s.startMs < due.atMs);
    const planned = window.filter((s) => onIn(s, id, kind)).length;
    const rank = 1 + window.filter((s) => s.price < slot.price).length;
    const when =
      due === null
        ? 'in the plan'
        : `before ${kind === 'ev' ? 'the car leaves at ' : ''}${due.atMs - slot.startMs < 24 * 3_600_000 ? '' : `${dayLabel(due.atMs, tz)} `}${hhmm(due.atMs, tz)}`;
    const place =
      rank > planned
        ? `the ${ordinal(rank)} cheapest of the ${window.length} ${unit[1]} left`
        : planned === 1
          ? `the cheapest ${unit[0]} left`
          : `one of the ${planned} cheapest ${unit[1]} left`;
    return `${place} ${when}${due?.note ?? ''}`;
  }

  return slots.map((slot) => {
    const clauses: string[] = [];
    for (const [id, t] of Object.entries(slot.tanks ?? {})) {
      if (!t.on) continue;
      clauses.push(
        `${ctx.names[id] ?? id}: ${(t.runOnKwh ?? 0) > 0 ? 'paid to use power, so it heats on to its maximum' : chosen(slot, id, 'tank')}`,
      );
    }
    for (const [id, e] of Object.entries(slot.evs ?? {})) if (e.on) clauses.push(`${ctx.names[id] ?? id}: ${chosen(slot, id, 'ev')}`);
    const binding = [...new Set(slot.binding)].filter((b) => clauses.length > 0 || idleReasons.has(b));
    const words = binding.map((b) => bindingWords(b, slot, plan, ctx)).filter((w): w is string => w !== null);
    if (clauses.length > 0 && slot.delta < 0) words.push(`an incentive takes ${fixed(-slot.delta, 3)} ${plan.currency}/kWh off the price`);
    if (clauses.length === 0) return `nothing planned${words.length > 0 ? `: ${words.join('; ')}` : ''}`;
    return [...clauses, ...words].join('; ');
  });
}
