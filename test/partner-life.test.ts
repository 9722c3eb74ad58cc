/**
 * A partner's whole life against the sandbox over real HTTP, driven through the project's own
 * client (src/spark/client.ts) on one injected clock: token, user, location in a test area,
 * patch, hot water tank + vehicle, enrollment, eligibility after the batch interval (by webhook
 * and in /events), the daily price curve, the usage report, compensation, deletion. Every
 * response the sandbox gives is validated against the OpenAPI documents.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { isWattshiftError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { verifySignature } from '../src/spark/webhook-signature.js';
import { auditResponses, validateComponent, type ResponseAudit } from './helpers/openapi-validate.js';

const secret = 'life-webhook-secret';
let clock: ManualClock;
let sb: Sandbox;
let client: SparkClient;
let audit: ResponseAudit;
let receiver: Server;
const notifications: { body: Record<string, unknown>; signed: boolean }[] = [];
const activeHours = new Set<number>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      notifications.push({
        body: JSON.parse(raw.toString()) as Record<string, unknown>,
        signed: verifySignature(raw, req.headers['x-payload-signature'] as string | undefined, secret),
      });
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  clock = new ManualClock(Date.UTC(2025, 10, 3, 8, 0)); // Monday 3 Nov 2025, 09:00 Oslo
  sb = await startSandbox({ clock, autoTick: false, seed: 11 });
  audit = auditResponses(sb);
  sb.onResponse(() => activeHours.add(Math.floor(clock.nowMs() / 3_600_000)));
  const c = sb.credentials[0];
  if (!c) throw new Error('no credentials');
  client = createSparkClient({
    baseUrl: sb.baseUrl,
    authUrl: sb.authUrl,
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    clock,
    logger: silentLogger(),
  });
});
afterAll(async () => {
  await client.close();
  await sb.close();
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
});

/** Moves the clock in steps of 10 minutes, running the sandbox's scheduler and some client calls. */
async function live(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 600_000) {
    await clock.advance(Math.min(600_000, left));
    await sb.tick();
    await client.listEvents({ pageSize: 10 });
  }
}

it('lives a partner life', async () => {
  const port = (receiver.address() as AddressInfo).port;
  const hook = await client.createWebhook({
    webhookUrl: `http://127.0.0.1:${port}/notify`,
    webhookSecret: secret,
    notificationTypes: ['UserEligibilityUpdated', 'PriceCurveCreated'],
  });
  expect(hook.status).toBe('New');

  await client.createUser('life-user');
  const loc = await client.createLocation('life-user', {
    locationId: 'life-home',
    locationType: 'Residential',
    coordinates: { latitude: 60.39, longitude: 5.32 },
  });
  expect(loc.userId).toBe('life-user');
  // Move it into test area 1 and give it a meter point id.
  await client.patchLocation('life-user', 'life-home', {
    coordinates: { latitude: 78.22094240482632, longitude: 15.619465054484257 },
    meterPointIds: ['707057500012345678'],
  });
  await client.createLocationResource('life-user', 'life-home', { resourceId: 'life-tank', resourceType: 'HotWaterTank' });
  await client.createVehicle('life-user', { resourceId: 'life-car', resourceType: 'Vehicle' });
  expect((await client.enroll('life-user')).isEnrolled).toBe(true);

  expect(await client.allEligibleUserIds()).toEqual([]);
  await live(10 * 60_000);
  expect(await client.allEligibleUserIds()).toEqual(['life-user']);
  expect((await client.getEligibility('life-user')).isEligible).toBe(true);
  const eligibility = notifications.find((n) => n.body.notificationType === 'UserEligibilityUpdated');
  expect(eligibility?.signed).toBe(true);
  expect(eligibility?.body.payload).toMatchObject({ addedUsers: ['life-user'], removedUsers: [] });
  const listed = await client.listEvents();
  expect(listed.events?.map((e) => e.id)).toContain(eligibility?.body.eventId);

  // The daily price curve at 13:00 Oslo (12:00 UTC in November) for tomorrow.
  await live(Date.UTC(2025, 10, 3, 12, 0) - clock.nowMs());
  const curveNote = notifications.find((n) => n.body.notificationType === 'PriceCurveCreated');
  expect(curveNote?.signed).toBe(true);
  expect(validateComponent('EventNotification', curveNote?.body)).toEqual([]);
  const curve = await client.getEvent(String(curveNote?.body.eventId));
  const payload = curve.payload as {
    targets: { resourceId: string }[];
    priceCurveDelta: { points: { price: number; timestamp: string }[]; currency: string };
  };
  expect(payload.targets.map((t) => t.resourceId).sort()).toEqual(['life-car', 'life-tank']);
  expect(payload.priceCurveDelta.currency).toBe('NOK');
  const seen = new Set<string>();
  const fresh: string[] = [];
  for await (const e of client.iterateEvents({ isKnown: (id) => seen.has(id) })) fresh.push(e.id);
  expect(fresh).toContain(curve.id);

  // After the event's day: report the tank's use in the encouraged hours.
  await live(Date.UTC(2025, 10, 5, 1, 0) - clock.nowMs());
  const encouraged = payload.priceCurveDelta.points.filter((p) => p.price < 0);
  const report = await client.postReport({
    eventId: curve.id,
    payloads: [
      {
        payloadType: 'EnergyUsage',
        resourceId: 'life-tank',
        locationId: 'life-home',
        resolution: '01:00:00',
        points: encouraged.map((p) => ({ timestamp: p.timestamp, kiloWattHours: 1.5 })),
      },
    ],
  });
  expect(report.eventId).toBe(curve.id);
  expect(sb.acceptedReports()).toHaveLength(1);
  await expect(
    client.postReport({
      eventId: curve.id,
      payloads: [
        {
          payloadType: 'EnergyUsage',
          resourceId: 'life-tank',
          resolution: '01:00:00',
          points: [{ timestamp: encouraged[0]?.timestamp ?? '', kiloWattHours: 1 }],
        },
      ],
    }),
  ).rejects.toThrow(/duplicate/);

  const comp = await client.getCompensation('life-user');
  const expected = encouraged.reduce((s, p) => s - 1.5 * p.price, 0);
  expect(comp.locationCompensations?.[0]?.activeAmount).toBeCloseTo(expected, 1);
  expect(comp.locationCompensations?.[0]?.currency).toBe('NOK');

  await client.deleteLocation('life-user', 'life-home');
  await client.deleteUser('life-user');
  const gone = await client.getUser('life-user').catch((e: unknown) => e);
  expect(isWattshiftError(gone, 'API_NOT_FOUND')).toBe(true);

  // One token per hour of activity, not one per request.
  expect(audit.records.length).toBeGreaterThan(150);
  expect(client.tokens.fetchCount).toBe(sb.tokensIssued());
  expect(sb.tokensIssued()).toBeLessThanOrEqual(activeHours.size + 1);
  expect(sb.tokensIssued()).toBeGreaterThan(1);
  expect(audit.failures).toEqual([]);
});
