/**
 * The hub's checks against a database that does not answer: a health query blocked behind a lock
 * and a server that accepts the connection but says nothing end within node-postgres's timeouts;
 * the report deadline check against a database that is down logs its own failure, not the health
 * check's.
 */
import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { startDeadlineCheck } from '../../src/hub/deadline-check.js';
import { createHubHealth } from '../../src/hub/health.js';
import { migrate } from '../../src/hub/migrations.js';
import { createLogger } from '../../src/log.js';
import { freePort } from '../helpers/mosquitto.js';
import { postgresAvailable, startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { eventually, type LogLine } from './fleet-world.js';

function capture() {
  const logs: LogLine[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (l: string) => void logs.push(JSON.parse(l) as LogLine) } });
  return { logs, logger };
}

describe.skipIf(!postgresAvailable())('hub database timeouts', () => {
  let cluster: PostgresCluster;
  let url: string;

  beforeAll(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase('hub');
    const pool = new pg.Pool({ connectionString: url });
    await migrate(pool);
    await pool.end();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('answers unhealthy within its timeout while the outbox query waits behind a lock, and healthy again after', async () => {
    const { logs, logger } = capture();
    const health = createHubHealth({ databaseUrl: url, brokerConnected: () => true, eventPoll: () => ({ ok: true, lastPollAtMs: null }), logger });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE report_outbox IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const h = await health.check();
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(h).toMatchObject({ ok: false, database: { ok: false, error: expect.stringMatching(/timeout/i) }, outbox: null });
      expect(logs.some((l) => l.code === 'STORE_FAILED' && l.component === 'hub-health')).toBe(true);
      await admin.query('ROLLBACK');
      // The timed-out connection may be gone; the next check makes a new one.
      await eventually(async () => ((await health.check()).ok ? true : undefined));
    } finally {
      await admin.end();
      await health.stop();
    }
  });

  it('answers unhealthy within its timeout from a server that accepts the connection and says nothing', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => void sockets.add(s.on('error', () => undefined)));
    const port = await freePort();
    await new Promise<void>((r) => silent.listen(port, '127.0.0.1', () => r()));
    const health = createHubHealth({
      databaseUrl: `postgres://hub@127.0.0.1:${port}/hub`,
      brokerConnected: () => true,
      eventPoll: () => ({ ok: true, lastPollAtMs: null }),
      logger: capture().logger,
    });
    try {
      const started = Date.now();
      const h = await health.check();
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(h.database.ok).toBe(false);
      expect(h.ok).toBe(false);
    } finally {
      await health.stop();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('logs its own STORE_FAILED when the database is down, and nothing from the health check', async () => {
    const { logs, logger } = capture();
    const pool = new pg.Pool({ connectionString: `postgres://hub@127.0.0.1:${await freePort()}/hub` });
    const check = startDeadlineCheck({ pool, clock: systemClock, logger });
    try {
      await eventually(async () => (logs.length > 0 ? true : undefined));
      expect(logs).toEqual([
        expect.objectContaining({ level: 'warn', code: 'STORE_FAILED', msg: 'report deadline check failed; tried again at the next run' }),
      ]);
    } finally {
      await check.stop();
      await pool.end();
    }
  });
});
