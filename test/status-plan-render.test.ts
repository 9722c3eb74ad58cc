import { describe, expect, it } from 'vitest';
import { renderPlan } from '../src/cli/plan-render.js';
import type { PlanView } from '../src/view/model.js';
import { samplePlan, t0 } from './fixtures/ha/sample-view.js';

const names = { tank: 'Hot water', ev: 'Charger' };

function rowOf(text: string, label: string): string {
  const line = text.split('\n').find((l) => l.startsWith(label));
  expect(line, `row ${label}`).toBeDefined();
  return line!.slice(14, 14 + 48);
}

describe('renderPlan (terminal)', () => {
  it('draws a price chart, one row per device with its on-slots, and the cost summary', () => {
    const plan = samplePlan();
    const out = renderPlan(plan, { explain: false, timezone: 'UTC', width: 100, names });
    expect(out).toContain('Plan Mon 02-03 00:00 → Wed 04-03 00:00 (UTC), 60-min slots');
    // one column per slot: the rows mark exactly the planned slots
    const tank = rowOf(out, 'Hot water');
    expect([...tank].flatMap((c, i) => (c === '█' ? [i] : []))).toEqual([2, 3, 4, 14, 26]);
    const ev = rowOf(out, 'Charger');
    expect([...ev].flatMap((c, i) => (c === '█' ? [i] : []))).toEqual([1, 2, 3, 4, 5, 25, 26, 27]);
    // the tallest column of the chart's top row is the most expensive slot
    const topRow = out.split('\n')[2]!.slice(14);
    const maxIdx = plan.slots.reduce((best, s, i) => (s.pricePerKwh > plan.slots[best]!.pricePerKwh ? i : best), 0);
    expect(topRow[maxIdx]).toBe('█');
    expect(out).toMatch(/^Expected cost 41\.27 NOK, incentive 3\.10 NOK already taken off\nWithout shifting 55\.90 NOK: saving 14\.63 NOK$/m);
    expect(out).toContain('Shortfall: ev: target 30 kWh');
    expect(out).not.toContain('Why each slot');
    expect(out.split('\n').every((l) => [...l].length <= 100)).toBe(true);
  });

  it('gives a device name too long for the label column a line of its own, whole', () => {
    const out = renderPlan(samplePlan(), {
      explain: false,
      timezone: 'UTC',
      width: 100,
      names: { tank: 'Hot water tank in the basement', ev: 'Charger' },
    });
    const lines = out.split('\n');
    const at = lines.indexOf('Hot water tank in the basement');
    expect(at).toBeGreaterThan(0);
    expect([...lines[at + 1]!.slice(14, 14 + 48)].flatMap((c, i) => (c === '█' ? [i] : []))).toEqual([2, 3, 4, 14, 26]);
    expect(lines[at + 1]!.slice(0, 13).trim()).toBe('');
  });

  it('explains every slot with its reason, in the requested timezone', () => {
    const plan = samplePlan();
    const out = renderPlan(plan, { explain: true, timezone: 'Europe/Oslo', names });
    const explained = out.split('Why each slot:\n')[1]!.trim().split('\n');
    expect(explained).toHaveLength(plan.slots.length);
    expect(explained[2]).toMatch(/^ {2}Mon 02-03 03:00 {2}\S+ Δ-0\.250 {2}Hot water ON 3\.0 kW \d+°C, Charger ON 7\.4 kW — cheap hour/);
    expect(explained[10]).toContain('— price above the cheapest hours needed');
  });

  it('fits 15-minute slots into the width by grouping, marking partly-on columns', () => {
    const base = samplePlan();
    const plan: PlanView = {
      ...base,
      slotMinutes: 15,
      slots: base.slots.flatMap((s) =>
        [0, 1, 2, 3].map((q) => ({
          ...s,
          startMs: s.startMs + q * 900_000,
          devices: { ...s.devices, tank: { ...s.devices['tank']!, on: s.devices['tank']!.on && q < 2 } },
        })),
      ),
    };
    const out = renderPlan(plan, { explain: false, timezone: 'UTC', width: 80, names, nowMs: t0 + 3 * 3600_000 });
    expect(out).toContain('4 per column');
    const tank = out.split('\n').find((l) => l.startsWith('Hot water'))!;
    expect(tank).toContain('▌');
    expect(tank).not.toContain('█');
    expect(tank).toMatch(/10 slots$/);
    expect(out.split('\n').every((l) => [...l].length <= 80)).toBe(true);
    expect(out).toMatch(/^now {11}\s{3}\^$/m);
  });

  it('handles an empty plan and rejects an unknown timezone', () => {
    expect(renderPlan({ ...samplePlan(), slots: [] }, { explain: true, timezone: 'UTC' })).toContain('No plan');
    expect(() => renderPlan(samplePlan(), { explain: false, timezone: 'Nowhere/City' })).toThrow(RangeError);
  });
});
