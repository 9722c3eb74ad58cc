/** Webhook calls for the hostile suite: notification bodies for a world's home, and signed or unsigned posts. */
import type { World } from '../helpers/daemon-harness.js';

export const webhookSecret = 'hostile-webhook-secret-7c1e';
export const webhookPath = '/spark/notify';
const hourMs = 3_600_000;

/** The webhook section of a daemon config: the receiver on `port`, with or without the secret. */
export function webhookEvents(port: number, withSecret = true): Record<string, unknown> {
  return { webhook: { enabled: true, port, path: webhookPath, ...(withSecret ? { secret: webhookSecret } : {}) } };
}

/** ISO time of the world's current hour plus `h` hours. */
export function hourFromNow(world: World, h: number): string {
  return new Date(Math.floor(world.clock.nowMs() / hourMs) * hourMs + h * hourMs).toISOString();
}

/** A notification body for this home. */
export function notification(world: World, eventId: string, payload: Record<string, unknown>, type: string): string {
  const at = new Date(world.clock.nowMs()).toISOString();
  return JSON.stringify({ notificationId: `n-${eventId}`, eventId, eventCreatedAtUtc: at, notificationSentUtc: at, notificationType: type, payload });
}

export function lpc(world: World, id: string, points: { timestamp: string; maxPowerInKiloWatts: number }[], resolution = '01:00:00'): string {
  const locationId = world.registration!.locationId;
  return notification(world, id, { payloadType: 'LocationLPC', targets: [{ locationId, resolution, points }] }, 'LocationLPCRequested');
}

export function curve(world: World, id: string, points: { timestamp: string; price: number }[], resolution = '01:00:00'): string {
  const reg = world.registration!;
  return notification(
    world,
    id,
    {
      payloadType: 'PriceCurve',
      priceArea: 'NO4',
      targets: [{ resourceId: reg.resources['tank']!, locationId: reg.locationId }],
      priceCurveDelta: { currency: 'NOK', energyUnit: 'kWh', resolution, points },
    },
    'PriceCurveCreated',
  );
}

/** Posts `body` to the receiver on 127.0.0.1:`port`; the status, or 0 when no answer came. */
export async function post(port: number, body: string, signature: string | null): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== null) headers['x-payload-signature'] = signature;
  const res = await fetch(`http://127.0.0.1:${port}${webhookPath}`, { method: 'POST', body, headers, signal: AbortSignal.timeout(10_000) }).catch(
    () => null,
  );
  return res?.status ?? 0;
}
