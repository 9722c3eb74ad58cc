/**
 * The plan chart draws the limits the plan keeps: the home's power limit and its LPC caps over the
 * planned power, and a device's own cap over its row, each where its time falls on the chart.
 */
import { describe, expect, it } from 'vitest';
import type { LimitView, PlanView } from '../view/model.js';
import { renderPlanSvg } from './svg.js';

const hour = 3_600_000;
const t0 = Date.UTC(2026, 2, 2, 0);
const tankOn = new Set([1, 2]);
const carOn = new Set([2, 3]);

const plan: PlanView = {
  createdMs: t0,
  mode: 'optimal',
  slotMinutes: 60,
  currency: 'NOK',
  expectedCost: 1,
  baselineCost: 2,
  incentive: 0,
  shortfalls: [],
  slots: Array.from({ length: 6 }, (_, i) => ({
    startMs: t0 + i * hour,
    pricePerKwh: 1 + i / 10,
    deltaPerKwh: 0,
    devices: { tank: { powerKw: tankOn.has(i) ? 3 : 0, on: tankOn.has(i) }, car: { powerKw: carOn.has(i) ? 7 : 0, on: carOn.has(i) } },
  })),
};
const limits: LimitView[] = [
  { eventId: 'home', deviceId: null, capKw: 7, startMs: t0 + hour, endMs: t0 + 3 * hour, active: true },
  { eventId: 'tank', deviceId: 'tank', capKw: 0, startMs: t0 + 4 * hour, endMs: t0 + 8 * hour, active: false },
  { eventId: 'later', deviceId: null, capKw: 4, startMs: t0 + 10 * hour, endMs: t0 + 11 * hour, active: false },
];

/** The attributes of each element of `tag` with `class`. */
function elements(svg: string, tag: string, cls: string): Record<string, string>[] {
  return [...svg.matchAll(new RegExp(`<${tag} class="${cls}"([^>]*)>`, 'g'))].map((m) =>
    Object.fromEntries([...m[1]!.matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])),
  );
}

describe('the limits on the plan chart', () => {
  const width = 960;
  const svg = renderPlanSvg(plan, { timezone: 'UTC', width, limitKw: 11, limits, names: { tank: 'Hot water', car: 'Garage' } });
  // The chart's time axis: 110 px of labels on the left, 56 on the right, six slots between.
  const x = (slot: number): number => 110 + slot * ((width - 110 - 56) / 6);

  it("draws the home's limit across the chart and each LPC cap of the home over its own hours, below the limit", () => {
    const [limit] = elements(svg, 'line', 'limit-line');
    expect(limit).toMatchObject({ 'data-kw': '11', x1: '110', x2: String(width - 56) });
    expect(svg).toContain('<title>the home&#39;s power limit, 11.0 kW</title>');
    const caps = elements(svg, 'line', 'cap-line');
    expect(caps).toHaveLength(1); // the cap after the plan's end is not drawn
    expect(Number(caps[0]!['x1'])).toBeCloseTo(x(1), 1);
    expect(Number(caps[0]!['x2'])).toBeCloseTo(x(3), 1);
    expect(Number(caps[0]!['y1'])).toBeGreaterThan(Number(limit!['y1']));
    expect(svg).toContain('<title>LPC cap on the home, 7.0 kW, Mon 02-03 01:00 → 03:00</title>');
  });

  it('draws the planned power of all devices under them, a bar per slot with power', () => {
    const bars = elements(svg, 'rect', 'power-bar');
    expect(bars.map((b) => Math.round((Number(b['x']) - x(0)) / (x(1) - x(0))))).toEqual([1, 2, 3]);
    const height = (i: number): number => Number(bars[i]!['height']);
    expect(height(1) / height(0)).toBeCloseTo(10 / 3, 1);
    expect(svg).toContain('<title>02:00 planned 10.0 kW</title>');
  });

  it("marks a device's own cap over its row, up to the end of the plan", () => {
    const caps = elements(svg, 'rect', 'device-cap');
    expect(caps).toHaveLength(1);
    expect(caps[0]).toMatchObject({ 'data-device': 'tank', 'data-kw': '0' });
    expect(Number(caps[0]!['x'])).toBeCloseTo(x(4), 1);
    expect(Number(caps[0]!['x']) + Number(caps[0]!['width'])).toBeCloseTo(x(6), 1);
    expect(svg).toContain('<title>Hot water: LPC cap 0.0 kW, Mon 02-03 04:00 → 08:00</title>');
  });
});
