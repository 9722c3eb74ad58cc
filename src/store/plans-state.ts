import { deflateSync, inflateSync } from 'node:zlib';
import { z } from 'zod';
import { WattshiftError } from '../errors.js';
import type { StoreContext } from './context.js';
import type { Store } from './types.js';
import { msInput, msRow, roundMs } from './time.js';
import { checkInput, guard, jsonText, parseRow, toJson } from './errors.js';
import { withHouseUnitKeys } from './legacy-unit-keys.js';

/** How many plans savePlan keeps (older ones also go with retention). */
export const KEEP_PLANS = 48;

const planInputSchema = z.strictObject({
  createdAtMs: msInput,
  horizonStartMs: msInput,
  horizonEndMs: msInput,
  json: z.unknown(),
});

/** A plan's JSON as stored: deflated (a BLOB), or text in rows stored before plans were deflated. */
const storedPlanJson = z.union([z.string(), z.instanceof(Buffer).transform((b) => inflateSync(b).toString('utf8'))]);

const planRowSchema = z.strictObject({
  id: z.number().int(),
  createdAtMs: msRow,
  horizonStartMs: msRow,
  horizonEndMs: msRow,
  json: storedPlanJson.pipe(jsonText).transform(withHouseUnitKeys),
});

/** This table's part of the {@link Store} (its documentation is there). */
export type PlansAndStateTables = Pick<Store, 'savePlan' | 'latestPlan' | 'planIdsBetween' | 'plansById' | 'getState' | 'setState' | 'deleteState'>;

const latestRawSchema = z.object({ id: z.number(), s: z.number(), e: z.number(), json: z.union([z.string(), z.instanceof(Buffer)]) }).optional();
const idsSchema = z.array(z.number().int());

export function plansAndStateTables(ctx: StoreContext): PlansAndStateTables {
  const { db } = ctx;
  const planColumns = `id, created_at_ms AS createdAtMs, horizon_start_ms AS horizonStartMs,
    horizon_end_ms AS horizonEndMs, json`;
  const latest = db.prepare(`SELECT ${planColumns} FROM plans ORDER BY id DESC LIMIT 1`);
  const overlappingIds = db.prepare('SELECT id FROM plans WHERE horizon_end_ms > ? AND horizon_start_ms < ? ORDER BY id').pluck();
  const byIds = db.prepare(`SELECT ${planColumns} FROM plans WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`);
  const latestRaw = db.prepare('SELECT id, horizon_start_ms AS s, horizon_end_ms AS e, json FROM plans ORDER BY id DESC LIMIT 1');
  const insertPlan = db.prepare(`INSERT INTO plans (created_at_ms, horizon_start_ms, horizon_end_ms, json)
    VALUES (@createdAtMs, @horizonStartMs, @horizonEndMs, @json)`);
  const trimPlans = db.prepare('DELETE FROM plans WHERE id NOT IN (SELECT id FROM plans ORDER BY id DESC LIMIT ?)');
  const getValue = db.prepare('SELECT value_json FROM kv_state WHERE key = ?').pluck();
  const putValue = db.prepare(`INSERT INTO kv_state (key, value_json, updated_at_ms) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at_ms = excluded.updated_at_ms`);
  const delValue = db.prepare('DELETE FROM kv_state WHERE key = ?');

  return {
    savePlan(plan) {
      const p = checkInput(planInputSchema, plan, 'plan');
      const text = toJson(p.json, 'plan');
      // Deflated: a fifth or less of the text's pages written (the same text deflates the same).
      const json = deflateSync(text);
      return guard('savePlan', () =>
        ctx.tx(() => {
          // Re-planning often yields the same plan; writing it again would only wear the SD card.
          const prev = latestRawSchema.parse(latestRaw.get());
          const same = prev !== undefined && (typeof prev.json === 'string' ? prev.json === text : prev.json.equals(json));
          if (prev && same && prev.s === p.horizonStartMs && prev.e === p.horizonEndMs) {
            return { id: prev.id, stored: false };
          }
          const id = Number(insertPlan.run({ ...p, json }).lastInsertRowid);
          trimPlans.run(KEEP_PLANS);
          return { id, stored: true };
        }),
      );
    },

    latestPlan() {
      const row = guard('latestPlan', () => latest.get());
      return row === undefined ? undefined : parseRow(planRowSchema, row, 'plans');
    },

    planIdsBetween(fromMs, toMs) {
      return parseRow(
        idsSchema,
        guard('planIdsBetween', () => overlappingIds.all(fromMs, toMs)),
        'plans',
      );
    },

    plansById(ids) {
      if (ids.length === 0) return [];
      const rows = guard('plansById', () => byIds.all(JSON.stringify(ids)));
      return rows.map((row) => parseRow(planRowSchema, row, 'plans'));
    },

    getState(key, schema) {
      const text = guard('getState', () => getValue.get(key));
      if (text === undefined) return undefined;
      const parsed = jsonText.pipe(schema).safeParse(text);
      if (parsed.success) return parsed.data;
      throw new WattshiftError('STORE_FAILED', `store: state "${key}" is corrupt: ${z.prettifyError(parsed.error)}`, {
        retryable: false,
        cause: parsed.error,
        details: { table: 'kv_state', key },
      });
    },

    setState(key, value) {
      const json = toJson(value, `state "${key}"`);
      guard('setState', () => ctx.tx(() => putValue.run(key, json, roundMs(ctx.clock.nowMs()))));
    },

    deleteState(key) {
      guard('deleteState', () => ctx.tx(() => delValue.run(key)));
    },
  };
}
