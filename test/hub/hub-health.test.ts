/**
 * The hub's `/healthz` against real peers: PostgreSQL refusing the hub's connections, a report
 * backlog in the outbox, and the broker gone.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hub } from '../../src/hub/hub.js';
import type { HubHealth } from '../../src/hub/health.js';
import { createOutboxStore } from '../../src/hub/outbox-store.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { eventually, startFleetWorld, type FleetWorld } from './fleet-world.js';

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('hub health endpoint', () => {
  let world: FleetWorld;
  let hub: Hub;
  let admin: pg.Client;
  const health = async (): Promise<{ status: number; body: HubHealth }> => {
    const res = await fetch(new URL('/healthz', hub.webhookUrl));
    return { status: res.status, body: (await res.json()) as HubHealth };
  };

  beforeAll(async () => {
    world = await startFleetWorld();
    hub = await world.startHub('hub-health');
    // The test's own pool loses its connections too when the hub's are ended; it reconnects.
    world.pool.on('error', () => undefined);
    admin = new pg.Client({ connectionString: world.pg.url() });
    await admin.connect();
  }, 60_000);
  afterAll(async () => {
    await admin?.end();
    await world?.stop();
  });

  it('is healthy with the database and broker up, and reports the outbox backlog and the age of its oldest row', async () => {
    expect(await health()).toEqual({
      status: 200,
      body: {
        ok: true,
        database: { ok: true },
        broker: { ok: true },
        events: expect.objectContaining({ ok: true }),
        outbox: { pending: 0, oldestPendingAgeS: null, nearestDeadline: null, deadlineNear: false },
      },
    });
    // A row due in a day, so no worker takes it, made 90 s ago.
    await world.pool.query(
      `INSERT INTO report_outbox (gateway_id, idempotency_key, body, state, next_attempt_at, created_at)
       VALUES ('gw-a', 'k-backlog', '{"eventId":"e","payloads":[]}', 'pending', now() + interval '1 day', now() - interval '90 seconds')`,
    );
    const { status, body } = await health();
    expect(status).toBe(200);
    expect(body.outbox?.pending).toBe(1);
    expect(body.outbox?.oldestPendingAgeS).toBeGreaterThanOrEqual(90);
    expect(body.outbox?.oldestPendingAgeS).toBeLessThan(120);
  });

  it("stores each report's month-end deadline, shows the nearest, and warns when one is near or past, at start and every six hours", async () => {
    const outbox = createOutboxStore(world.pool);
    const body = (hours: string[]) => ({
      eventId: 'e-deadline',
      payloads: [
        {
          payloadType: 'EnergyUsage' as const,
          resourceId: 'res-a',
          resolution: '01:00:00',
          points: hours.map((timestamp) => ({ timestamp, kiloWattHours: 1 })),
        },
      ],
    });
    const refused = { v: 1 as const, idempotencyKey: 'k-dl', status: 'rejected' as const, reason: 'test', atMs: Date.now() };
    await outbox.insert('k-dl', 'gw-a', body(['2026-10-31T22:00:00Z', '2026-10-31T23:00:00Z']), refused);
    const stored = await world.pool.query<{ deadline_at: Date }>(`SELECT deadline_at FROM report_outbox WHERE idempotency_key = 'k-dl'`);
    expect(stored.rows[0]!.deadline_at.toISOString()).toBe('2026-11-01T00:00:00.000Z');

    // A pending report whose month ended three days ago (not due for a retry yet, so no worker takes it).
    await world.pool.query(
      `INSERT INTO report_outbox (gateway_id, idempotency_key, body, state, next_attempt_at, deadline_at)
       VALUES ('gw-a', 'k-late', '{"eventId":"e","payloads":[]}', 'pending', now() + interval '1 day', now() - interval '3 days')`,
    );
    const { body: h } = await health();
    expect(h.outbox?.deadlineNear).toBe(true);
    expect(Date.parse(h.outbox!.nearestDeadline!)).toBeLessThan(Date.now() - 2 * 86_400_000);
    const warned = () => world.logs.filter((l) => l.code === 'REPORT_DEADLINE_NEAR');
    expect(warned()).toHaveLength(0);
    await world.startHub('hub-deadline'); // its check at start finds the late report
    await eventually(async () => (warned().length > 0 ? true : undefined));
    expect(warned()[0]).toMatchObject({ level: 'warn', pending: 2 });
    await world.pool.query(`DELETE FROM report_outbox WHERE idempotency_key IN ('k-late', 'k-dl')`);
  });

  it('answers 503 while PostgreSQL refuses the hub, logs STORE_FAILED, and recovers when it accepts again', async () => {
    await admin.query('ALTER DATABASE hub ALLOW_CONNECTIONS false');
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'hub'");
    try {
      const { status, body } = await health();
      expect(status).toBe(503);
      expect(body.ok).toBe(false);
      expect(body.database.ok).toBe(false);
      expect(body.database.error).toMatch(/not currently accepting connections|terminat/);
      expect(body.broker.ok).toBe(true);
      expect(body.outbox).toBeNull();
      expect(world.logs.some((l) => l.code === 'STORE_FAILED' && l.component === 'hub-health')).toBe(true);
    } finally {
      await admin.query('ALTER DATABASE hub ALLOW_CONNECTIONS true');
    }
    await eventually(async () => ((await health()).status === 200 ? true : undefined));
  });

  it('answers 503 when the broker is gone, and logs MQTT_UNAVAILABLE', async () => {
    await world.broker.stop();
    const { status, body } = await eventually(async () => {
      const h = await health();
      return h.status === 503 ? h : undefined;
    });
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, database: { ok: true }, broker: { ok: false } });
    expect(world.logs.some((l) => l.code === 'MQTT_UNAVAILABLE' && l.component === 'hub-health')).toBe(true);
  });
});
