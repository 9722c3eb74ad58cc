import { mkdirSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DaemonMetrics } from '../src/status/metrics.js';
import { startStatusServer } from '../src/status/server.js';
import type { StatusServer } from '../src/status/server.js';
import { plannedOnSlots, sampleView } from './fixtures/ha/sample-view.js';
import { launchChromium } from './helpers/chromium.js';
import { historyPeriods } from '../src/core/energy-history.js';
import type { EnergyHistory } from '../src/status/history.js';

/** Two weeks and a year of three devices with the home's money, one partial figure, one gap and one planned-against-metered row. */
function sampleHistory(nowMs: number): EnergyHistory {
  const { days, months } = historyPeriods(nowMs, 'Europe/Oslo', { days: 14, months: 12 });
  const money = (kwh: number) => ({
    cost: kwh * 1.1,
    incentive: kwh * 0.1,
    savings: kwh * 0.25,
    quality: 'complete' as const,
    hours: 24,
    pricedHours: 24,
  });
  const energy = (kwh: number) => ({
    tank: { kwh, quality: 'complete' as const, hours: 24, completeHours: 24 },
    car: { kwh: 0, quality: 'gap' as const, hours: 24, completeHours: 0 },
    grid: { kwh: kwh * 4, quality: 'partial' as const, hours: 24, completeHours: 20 },
  });
  return {
    nowMs,
    timezone: 'Europe/Oslo',
    currency: 'NOK',
    unreadablePlans: 0,
    devices: [
      { id: 'tank', name: 'Hot water tank', wholeHome: false },
      { id: 'car', name: 'Garage charger', wholeHome: false },
      { id: 'grid', name: 'Main meter', wholeHome: true },
    ],
    days: days.map((d, i) => ({
      ...d,
      energy: energy(8 + i),
      money: money(8 + i),
      plan: i === 1 ? { tank: { plannedKwh: 9, meteredKwh: 8.6, hours: 22 } } : ({} as Record<string, never>),
    })),
    months: months.map((m, i) => ({ ...m, energy: energy(240 + i), money: money(240 + i), plan: {} })),
  };
}

describe('status page in headless Chromium', () => {
  let browser: Browser;
  let server: StatusServer;
  const view = sampleView();

  beforeAll(async () => {
    server = await startStatusServer({
      port: 0,
      getView: () => view,
      getHistory: sampleHistory,
      metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
      timezone: 'Europe/Oslo',
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('draws the plan: one slot per planned on-slot, price bars, delta overlay and the temperature forecast', async () => {
    const page = await browser.newPage({ viewport: { width: 1060, height: 1100 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto(`${server.url}/`);
    expect(res?.status()).toBe(200);
    const plan = view.plan!;

    const svg = page.locator('svg.plan-chart:visible');
    expect(await svg.count()).toBe(1);
    expect(await page.locator('svg.plan-chart:visible rect.slot').count()).toBe(plannedOnSlots(plan));
    expect(plannedOnSlots(plan)).toBe(13);
    for (const id of ['tank', 'ev']) {
      const expected = plan.slots.filter((s) => s.devices[id]?.on).map((s) => new Date(s.startMs).toISOString());
      const drawn = await page
        .locator(`svg.plan-chart:visible rect.slot[data-device="${id}"]`)
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-start')));
      expect(drawn).toEqual(expected);
    }
    expect(await page.locator('svg.plan-chart:visible rect.price-bar').count()).toBe(plan.slots.length);
    expect(await page.locator('svg.plan-chart:visible rect.delta').count()).toBe(plan.slots.filter((s) => s.deltaPerKwh !== 0).length);
    const points = await page.locator('svg.plan-chart:visible polyline.temp-line[data-device="tank"]').getAttribute('points');
    expect(points?.trim().split(/\s+/)).toHaveLength(plan.slots.length);

    // The slots are laid out in time order, inside the chart, and actually rendered (non-zero boxes).
    const boxes = await page
      .locator('svg.plan-chart:visible rect.slot[data-device="tank"]')
      .evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((b) => ({ x: b.x, w: b.width, h: b.height })));
    expect(boxes.every((b) => b.w > 1 && b.h > 1)).toBe(true);
    expect(boxes.map((b) => b.x)).toEqual([...boxes.map((b) => b.x)].sort((a, b) => a - b));

    await expect(page.locator('#health').textContent()).resolves.toBe('healthy');
    await expect(page.title()).resolves.toContain('Home <Oslo> & "co"');
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/status-page.png', fullPage: true });
    expect(statSync('test-artifacts/status-page.png').size).toBeGreaterThan(10_000);
    expect(errors).toEqual([]);
    await page.close();
  });

  for (const width of [390, 1280]) {
    it(`fits a ${width} px wide screen: no sideways scrolling of the page, chart within the width, legend, currency on every money figure`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(`${server.url}/`);
      const overflow = await page.locator('html').evaluate((el) => el.scrollWidth - el.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      const chart = await page.locator('svg.plan-chart:visible').boundingBox();
      expect(chart!.width).toBeGreaterThan(Math.min(width, 1000) * 0.8);
      expect(chart!.x + chart!.width).toBeLessThanOrEqual(width);
      // The chart's words stay legible: its text is drawn at 10 px or more on either screen.
      const fontPx = await page
        .locator('svg.plan-chart:visible g.device-row text')
        .first()
        .evaluate((el) => el.getBoundingClientRect().height);
      expect(fontPx).toBeGreaterThanOrEqual(10);
      // Every device's values, its plan included, are on the screen without scrolling sideways.
      const cells = await page.locator('table.devices tbody td:visible').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right));
      expect(cells.length).toBeGreaterThan(10);
      expect(Math.max(...cells)).toBeLessThanOrEqual(width);
      await expect(page.locator('table.devices tr[data-device="tank"] td').nth(6).textContent()).resolves.toMatch(/^off/);
      expect(await page.locator('#legend span').allTextContents()).toEqual(
        expect.arrayContaining(['device planned on', 'incentive delta raising the price']),
      );
      expect(await page.locator('#legend').isVisible()).toBe(true);
      const costs = (await page.locator('#costs').textContent())!;
      expect(costs).toMatch(/To pay for the planned energy: 41\.27 NOK/);
      expect(costs).toMatch(/incentive earned: 3\.10 NOK/);
      expect(costs).toMatch(/Saved against no shifting: 14\.63 NOK \(would cost 55\.90 NOK\)/);
      const figures = costs.match(/-?\d+\.\d\d(?! NOK)/g);
      expect(figures, 'a money figure without its currency').toBeNull();
      // Wide tables scroll inside their box on a phone instead of widening the page.
      for (const table of [
        page.locator('div.scroll').first(),
        page.locator('div.scroll:has(#history-days)'),
        page.locator('div.scroll:has(#history-months)'),
      ]) {
        const box = await table.boundingBox();
        expect(box!.x + box!.width).toBeLessThanOrEqual(width);
      }
      expect(await page.locator('#history-days tbody tr').count()).toBe(14);
      const money = await page
        .locator('#history-days tbody tr')
        .first()
        .locator('td')
        .evaluateAll((tds) => tds.slice(-3).map((td) => td.textContent));
      expect(money).toEqual(['8.80 NOK', '0.80 NOK', '2.00 NOK']);
      expect(await page.locator('#history-hint').isVisible()).toBe(width < 600);
      // Scrolled to its end, a wide history table still shows each row's day.
      const days = page.locator('div.scroll:has(#history-days)');
      await days.evaluate((el) => {
        el.scrollLeft = el.scrollWidth;
      });
      const dayCell = await page.locator('#history-days tbody tr td').first().boundingBox();
      expect(dayCell!.x).toBeGreaterThanOrEqual((await days.boundingBox())!.x - 1);
      await days.evaluate((el) => {
        el.scrollLeft = 0;
      });
      expect(await page.locator('#history-months [data-quality="partial"]').first().textContent()).toMatch(/^\d+\.\d kWhpartial: 20 of 24 h whole$/);
      expect(await page.locator('#plan-outcome').textContent()).toContain('9.0 kWh8.6 kWh22 h');
      mkdirSync('test-artifacts', { recursive: true });
      await page.screenshot({ path: `test-artifacts/status-page-${width}.png`, fullPage: true });
      expect(statSync(`test-artifacts/status-page-${width}.png`).size).toBeGreaterThan(10_000);
      await page.close();
    });
  }
});
