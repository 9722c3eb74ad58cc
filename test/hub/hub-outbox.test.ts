/**
 * The hub's PostgreSQL parts on a real throwaway cluster: migrations, the outbox's retry and
 * refusal paths (the API client is our own port, faked here to fail on cue), and the config.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { WattshiftError } from '../../src/errors.js';
import type { FleetReceipt } from '../../src/fleet/wire.js';
import { parseHubConfig } from '../../src/hub/config.js';
import { migrate, migrations } from '../../src/hub/migrations.js';
import { createOutboxStore, type OutboxStore } from '../../src/hub/outbox-store.js';
import { startOutboxWorker } from '../../src/hub/outbox-worker.js';
import { createLogger } from '../../src/log.js';
import type { ReportRequest } from '../../src/spark/wire.js';
import { postgresAvailable, startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { eventually, type LogLine } from './fleet-world.js';

const report: ReportRequest = {
  eventId: 'ev-1',
  payloads: [{ payloadType: 'LocationLPCAcknowledgement', acknowledgedTargets: [{ locationId: 'loc-a', meterPointId: 'mp-a' }] }],
};

describe.skipIf(!postgresAvailable())('hub database', () => {
  let cluster: PostgresCluster;
  let pool: pg.Pool;
  let outbox: OutboxStore;
  const logs: LogLine[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void logs.push(JSON.parse(l) as LogLine) } });

  /** A worker on the real outbox with the API client port answering as `postReport` says. */
  const runWorker = (instanceId: string, retryMs: number, postReport: () => Promise<{ id: string }>) => {
    const receipts: FleetReceipt[] = [];
    const worker = startOutboxWorker(
      { instanceId, leaseMs: 5_000, batch: 5, idleMs: 50, retry: { baseMs: retryMs, maxMs: retryMs } },
      { outbox, spark: { postReport }, sendReceipt: async (_gw, r) => void receipts.push(r), clock: systemClock, logger },
    );
    return { receipts, stop: () => worker.stop() };
  };

  beforeAll(async () => {
    cluster = await startPostgres();
    pool = new pg.Pool({ connectionString: await cluster.createDatabase('outbox'), max: 3 });
    outbox = createOutboxStore(pool);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await cluster?.stop();
  });

  it('migrates once, even with two instances starting together, and refuses a database from a newer hub', async () => {
    const runs = await Promise.all([migrate(pool), migrate(pool)]);
    expect(runs.flat()).toEqual(migrations.map((m) => m.version));
    expect(await migrate(pool)).toEqual([]);
    await pool.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
    await expect(migrate(pool)).rejects.toMatchObject({ code: 'STORE_SCHEMA_NEWER' });
    await pool.query('DELETE FROM schema_migrations WHERE version = 999');
  });

  it('retries a transient API failure after a backoff, then uploads and sends the receipt', async () => {
    await outbox.insert('k-retry', 'gw-a', report);
    const calls: number[] = [];
    const { receipts, stop } = runWorker('w-1', 300, async () => {
      calls.push(Date.now());
      if (calls.length === 1) throw new WattshiftError('API_UNAVAILABLE', 'HTTP 503');
      return { id: 'report-1' };
    });
    try {
      const receipt = await eventually(async () => receipts.find((r) => r.idempotencyKey === 'k-retry'));
      expect(receipt).toMatchObject({ status: 'accepted', reportId: 'report-1' });
      expect(calls).toHaveLength(2);
      // Full-jitter backoff of a 300 ms ceiling: at least half of it passed before the retry.
      expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(150);
      expect(await outbox.get('gw-a', 'k-retry')).toMatchObject({ state: 'accepted', attempts: 2, apiReportId: 'report-1', lastError: null });
      expect(logs.some((l) => l.code === 'API_UNAVAILABLE' && l.idempotencyKey === 'k-retry')).toBe(true);
    } finally {
      await stop();
    }
  });

  it("settles a report the API refuses for good as rejected, with the API's reason, and never tries it again", async () => {
    await outbox.insert('k-refused', 'gw-a', report);
    let calls = 0;
    const { receipts, stop } = runWorker('w-2', 50, async () => {
      calls++;
      throw new WattshiftError('API_REJECTED', 'resource is not a target of the event');
    });
    try {
      const receipt = await eventually(async () => receipts.find((r) => r.idempotencyKey === 'k-refused'));
      expect(receipt.status).toBe('rejected');
      expect(receipt.reason).toContain('not a target');
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(1);
      expect(logs.some((l) => l.code === 'REPORT_REJECTED' && l.idempotencyKey === 'k-refused')).toBe(true);
    } finally {
      await stop();
    }
  });

  it('the API accepted but the database did not record it: never called rejected; settled from memory at the next claim, not uploaded twice', async () => {
    await outbox.insert('k-unrecorded', 'gw-a', report);
    // Our own store port, failing to record the first settle as a dropped connection would.
    let failNext = true;
    const flaky: OutboxStore = {
      ...outbox,
      settle: async (...args) => {
        if (failNext) {
          failNext = false;
          throw new Error('Connection terminated unexpectedly');
        }
        return outbox.settle(...args);
      },
    };
    const receipts: FleetReceipt[] = [];
    let calls = 0;
    const from = logs.length;
    const worker = startOutboxWorker(
      { instanceId: 'w-3', leaseMs: 300, batch: 5, idleMs: 50, retry: { baseMs: 50, maxMs: 50 } },
      {
        outbox: flaky,
        spark: { postReport: async () => ({ id: `report-${++calls}` }) },
        sendReceipt: async (_gw, r) => void receipts.push(r),
        clock: systemClock,
        logger,
      },
    );
    try {
      const receipt = await eventually(async () => receipts.find((r) => r.idempotencyKey === 'k-unrecorded'));
      expect(receipt).toMatchObject({ status: 'accepted', reportId: 'report-1' });
      expect(calls).toBe(1);
      expect(await outbox.get('gw-a', 'k-unrecorded')).toMatchObject({ state: 'accepted', apiReportId: 'report-1', attempts: 2 });
      const mine = logs.slice(from);
      expect(mine.filter((l) => l.code === 'REPORT_REJECTED' || l.code === 'INTERNAL')).toEqual([]);
      expect(mine.find((l) => l.code === 'STORE_FAILED' && l.component === 'hub-outbox')).toMatchObject({ level: 'warn' });
      expect(receipts.filter((r) => r.idempotencyKey === 'k-unrecorded')).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });

  it('a re-upload the API refuses as a duplicate of one it accepted (the first instance died before recording it) is settled accepted; on a first upload it is a refusal', async () => {
    await outbox.insert('k-dup', 'gw-a', report);
    await outbox.insert('k-dup-first', 'gw-a', report);
    // An instance claimed k-dup and died after its upload: its lease runs out.
    expect((await outbox.claim('w-dead', 1, 200)).map((r) => r.idempotencyKey)).toEqual(['k-dup']);
    await new Promise((r) => setTimeout(r, 300));
    const duplicate = () =>
      new WattshiftError('API_REJECTED', 'HTTP 400', {
        details: { serverMessage: "duplicate: a EnergyUsage report for resource 'res-a' of event ev-1 was already accepted (report r-1)" },
      });
    const { receipts, stop } = runWorker('w-4', 50, async () => {
      throw duplicate();
    });
    try {
      const again = await eventually(async () => receipts.find((r) => r.idempotencyKey === 'k-dup'));
      expect(again).toMatchObject({ status: 'accepted' });
      expect(await outbox.get('gw-a', 'k-dup')).toMatchObject({ state: 'accepted', attempts: 2 });
      const first = await eventually(async () => receipts.find((r) => r.idempotencyKey === 'k-dup-first'));
      expect(first).toMatchObject({ status: 'rejected' });
      expect(logs.some((l) => l.code === 'REPORT_REJECTED' && l.idempotencyKey === 'k-dup')).toBe(false);
    } finally {
      await stop();
    }
  });

  it('keeps idempotency keys apart per gateway: the same key from two gateways is two reports', async () => {
    expect((await outbox.insert('k-same', 'gw-a', report)).created).toBe(true);
    expect((await outbox.insert('k-same', 'gw-b', report)).created).toBe(true);
    expect((await outbox.insert('k-same', 'gw-a', report)).created).toBe(false);
  });
});

describe('hub config', () => {
  const valid = {
    version: 1,
    spark: { clientId: 'partner', clientSecret: { env: 'SPARK_SECRET' } },
    database: { url: { env: 'HUB_DB' } },
    broker: { url: 'mqtt://broker:1883', username: 'hub', password: 'pw' },
    webhook: { secret: 'hook' },
  };
  const env = { SPARK_SECRET: 's3cret', HUB_DB: 'postgres://hub:pw@db/hub' };

  it("takes the daemon's secret forms and fills in defaults", () => {
    const { config, secrets } = parseHubConfig(valid, { env });
    expect(config.spark.clientSecret).toBe('s3cret');
    expect(config.database.url).toBe('postgres://hub:pw@db/hub');
    expect(config.broker.topicPrefix).toBe('wattshift/fleet/v1');
    expect(config.outbox.leaseS).toBe(60);
    expect(secrets).toEqual(expect.arrayContaining(['s3cret', 'postgres://hub:pw@db/hub']));
  });

  it('refuses unknown keys, the daemon-only spark keys and bad values, naming each path', () => {
    const bad = { ...valid, extra: 1, spark: { ...valid.spark, locationId: 'home' }, broker: { ...valid.broker, sharedGroup: 'a/b' } };
    expect(() => parseHubConfig(bad, { env })).toThrow(WattshiftError);
    try {
      parseHubConfig(bad, { env });
    } catch (err) {
      const problems = ((err as WattshiftError).details?.problems as { path: string; message: string }[])
        .map((p) => `${p.path}: ${p.message}`)
        .join('\n');
      expect(problems).toMatch(/extra/);
      expect(problems).toMatch(/spark.*locationId/);
      expect(problems).toMatch(/broker\.sharedGroup/);
    }
  });
});
