import { z } from 'zod';
import type { StoreContext } from './context.js';
import type { Store } from './types.js';
import { checkInput, guard, parseRow } from './errors.js';
import { msRow, roundMs } from './time.js';

const HOUR_MS = 3_600_000;
const money = z.number().finite();

const costInputSchema = z.strictObject({
  subject: z.string().min(1),
  hourStartMs: msRow.refine((v) => v % HOUR_MS === 0, 'must be a whole UTC hour'),
  kwh: money,
  currency: z.string().regex(/^[A-Z]{3}$/),
  spotPerKwh: money,
  source: z.enum(['actual', 'forecast', 'nordPool', 'adviceOnly']),
  gridPeriod: z.string().min(1),
  energy: money,
  gridFee: money,
  tax: money,
  subsidy: money,
  vat: money,
  delta: money,
  total: money,
  baselineKwh: money.nullable(),
  baselineTotal: money.nullable(),
});

const costRowSchema = costInputSchema.extend({ pricedAtMs: msRow, capacityShare: money });
const shareSchema = z.strictObject({ hourStartMs: msRow, share: money });
const periodsSchema = z.array(z.strictObject({ startMs: msRow, endMs: msRow })).max(400);
const totalsRowSchema = z.strictObject({
  i: z.number().int().nonnegative(),
  hours: z.number().int(),
  total: money,
  delta: money,
  baselineTotal: money,
});

/** This table's part of the {@link Store} (its documentation is there). */
export type CostTables = Pick<Store, 'upsertHourlyCost' | 'readHourlyCost' | 'setCapacityShares' | 'costTotals'>;

/** The realised cost of metered hours, per subject (see core/bill). */
export function costTables(ctx: StoreContext): CostTables {
  const { db } = ctx;
  const upsert = db.prepare(`INSERT INTO hourly_cost (subject, hour_start_ms, kwh, currency, spot_per_kwh, source, grid_period,
      energy, grid_fee, tax, subsidy, vat, delta, total, baseline_kwh, baseline_total, priced_at_ms)
    VALUES (@subject, @hourStartMs, @kwh, @currency, @spotPerKwh, @source, @gridPeriod,
      @energy, @gridFee, @tax, @subsidy, @vat, @delta, @total, @baselineKwh, @baselineTotal, @pricedAtMs)
    ON CONFLICT (subject, hour_start_ms) DO UPDATE SET kwh = excluded.kwh, currency = excluded.currency,
      spot_per_kwh = excluded.spot_per_kwh, source = excluded.source, grid_period = excluded.grid_period,
      energy = excluded.energy, grid_fee = excluded.grid_fee, tax = excluded.tax, subsidy = excluded.subsidy,
      vat = excluded.vat, delta = excluded.delta, total = excluded.total,
      baseline_kwh = excluded.baseline_kwh, baseline_total = excluded.baseline_total, priced_at_ms = excluded.priced_at_ms`);
  const select = db.prepare(`SELECT subject, hour_start_ms AS hourStartMs, kwh, currency, spot_per_kwh AS spotPerKwh, source,
      grid_period AS gridPeriod, energy, grid_fee AS gridFee, tax, subsidy, vat, delta, total,
      baseline_kwh AS baselineKwh, baseline_total AS baselineTotal, capacity_share AS capacityShare, priced_at_ms AS pricedAtMs
    FROM hourly_cost WHERE subject = ? AND hour_start_ms >= ? AND hour_start_ms < ? ORDER BY hour_start_ms`);
  // Every hour of the month is written: a share moves to other hours as the month's peaks change.
  const share = db.prepare(`UPDATE hourly_cost SET capacity_share = ? WHERE subject = ? AND hour_start_ms = ?`);
  const clearShares = db.prepare(`UPDATE hourly_cost SET capacity_share = 0 WHERE subject = ? AND hour_start_ms >= ? AND hour_start_ms < ?`);
  // Periods as primary-key ranges, summed by SQLite (as energyTotals in energy.ts, which says why CROSS JOIN).
  const totals = db.prepare(`SELECT p.key AS i, count(*) AS hours, sum(c.total) AS total, sum(c.delta) AS delta,
      sum(coalesce(c.baseline_total, c.total)) AS baselineTotal
    FROM json_each(?) AS p CROSS JOIN hourly_cost AS c
      ON c.subject = ? AND c.hour_start_ms >= p.value ->> 'startMs' AND c.hour_start_ms < p.value ->> 'endMs'
    GROUP BY p.key`);
  return {
    costTotals(subject, periods) {
      const list = checkInput(
        periodsSchema,
        periods.map((p) => ({ startMs: p.startMs, endMs: p.endMs })),
        'cost periods',
      );
      const rows = guard('costTotals', () => totals.all(JSON.stringify(list), subject)).map((r) => parseRow(totalsRowSchema, r, 'hourly_cost'));
      const byIndex = new Map(rows.map((r) => [r.i, r]));
      return list.map((_, i) => {
        const { i: _i, ...sums } = byIndex.get(i) ?? { i, hours: 0, total: 0, delta: 0, baselineTotal: 0 };
        return sums;
      });
    },
    setCapacityShares(subject, fromMs, toMs, shares) {
      const parsed = shares.map((r) => checkInput(shareSchema, r, 'capacity share'));
      guard('setCapacityShares', () =>
        ctx.tx(() => {
          clearShares.run(subject, fromMs, toMs);
          for (const r of parsed) share.run(r.share, subject, r.hourStartMs);
        }),
      );
    },
    upsertHourlyCost(rows) {
      const parsed = rows.map((r) => checkInput(costInputSchema, r, 'hourly cost row'));
      if (parsed.length === 0) return;
      guard('upsertHourlyCost', () =>
        ctx.tx(() => {
          const pricedAtMs = roundMs(ctx.clock.nowMs());
          for (const r of parsed) upsert.run({ ...r, pricedAtMs });
        }),
      );
    },
    readHourlyCost(subject, fromMs, toMs) {
      const rows = guard('readHourlyCost', () => select.all(subject, fromMs, toMs));
      return rows.map((row) => parseRow(costRowSchema, row, 'hourly_cost'));
    },
  };
}
