/**
 * The simulated OCPP charge point, a card presented while it cannot reach the central system
 * (before its first connection, or during a network outage): once connected and booted it presents
 * the card (Authorize) and starts its own transaction with it, if the car with that card is still
 * plugged in. Checked on what the real central system hears over a real WebSocket.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { bootWaitMs, type LinkEvent } from '../src/devices/ocpp/link.js';
import { createOcppChargePointSim } from '../src/sandbox/devices/ocpp-charge-point-sim.js';
import type { GoeSimPlug } from '../src/sandbox/devices/goe-sim.js';
import { eventually } from './helpers/aedes.js';
import { closeOpened, open, password, startCentral, startMs, startTcpRelay } from './helpers/ocpp-world.js';

afterEach(closeOpened);

const battery = { capacityKwh: 60, socPct: 20 };
const minute = 60_000;

/** The central system, what it heard from cp1, and the charge point (through a relay that a test can cut). */
async function chargePoint(plugs: GoeSimPlug[]) {
  const clock = new ManualClock(startMs);
  const { cs, port } = await startCentral(clock);
  const events: LinkEvent[] = [];
  cs.link('cp1').subscribe((e) => events.push(e));
  const relay = await startTcpRelay(port);
  open.push(relay);
  const sim = createOcppChargePointSim({
    url: `ws://127.0.0.1:${relay.port}/ocpp`,
    identity: 'cp1',
    password,
    startMs,
    plugs,
    reconnectMs: { initial: 50, max: 200 },
  });
  open.push(sim);
  return {
    clock,
    sim,
    relay,
    /** The id tags of the Authorize requests, in order. */
    cards: () => events.flatMap((e) => (e.type === 'authorized' ? [e.idTag] : [])),
    /** The transactions started, with the id tag of their StartTransaction. */
    starts: () =>
      events.flatMap((e) => (e.type === 'transaction' && e.transactionId !== undefined ? [{ transactionId: e.transactionId, idTag: e.idTag }] : [])),
    /** StatusNotifications of connector 1 (the last thing the charge point sends on connecting). */
    statuses: () => events.flatMap((e) => (e.type === 'status' && e.connectorId === 1 ? [e.status] : [])),
    connections: () => events.filter((e) => e.type === 'connected').length,
  };
}
type ChargePoint = Awaited<ReturnType<typeof chargePoint>>;

/** Starts the charge point and waits until it is booted (it reports connector 1 after its boot). */
async function startOnline(cp: ChargePoint): Promise<void> {
  await cp.sim.start();
  await eventually(() => expect(cp.statuses().length).toBeGreaterThan(0));
}

/** Cuts the network and waits until the charge point knows it is offline. */
async function goOffline(cp: ChargePoint): Promise<void> {
  cp.relay.cut();
  await eventually(() => expect(cp.sim.connected).toBe(false));
}

/**
 * Lets the charge point reconnect and waits for the status that the central system asks for on
 * every connection: a card presented on reconnecting is sent before it (one call at a time, in order).
 */
async function comeBack(cp: ChargePoint): Promise<void> {
  const connections = cp.connections();
  const statuses = cp.statuses().length;
  cp.relay.restore();
  await eventually(() => expect(cp.connections()).toBe(connections + 1));
  // A reconnection is not a boot: the central system asks once the charge point has stayed silent a while.
  await cp.clock.advance(bootWaitMs);
  await eventually(() => expect(cp.statuses().length).toBeGreaterThan(statuses));
}

/** Waits until the central system has heard a StartTransaction and the charge point has its answer. */
async function transactionStarted(cp: ChargePoint): Promise<void> {
  await eventually(() => {
    expect(cp.starts()).toHaveLength(1);
    expect(cp.sim.transactionId).toBeDefined();
  });
}

describe('OCPP charge point simulator: a card presented while offline', () => {
  it('presented before the first connection, is presented once connected and booted, and starts a transaction with it', async () => {
    const cp = await chargePoint([{ atMs: startMs, idTag: 'CARD-EARLY', battery }]);
    await cp.sim.start();
    await transactionStarted(cp);
    expect(cp.cards()).toEqual(['CARD-EARLY']);
    expect(cp.starts()).toEqual([{ transactionId: cp.sim.transactionId, idTag: 'CARD-EARLY' }]);
  });

  it('presented during an outage, is presented once the charge point is back', async () => {
    const cp = await chargePoint([{ atMs: startMs + minute, idTag: 'CARD-OUTAGE', battery }]);
    await startOnline(cp);
    await goOffline(cp);
    await cp.sim.advance(2 * minute);
    expect(cp.sim.battery).toBeDefined();
    expect(cp.cards()).toEqual([]);
    expect(cp.sim.transactionId).toBeUndefined();

    cp.relay.restore();
    await transactionStarted(cp);
    expect(cp.cards()).toEqual(['CARD-OUTAGE']);
    expect(cp.starts()).toEqual([{ transactionId: cp.sim.transactionId, idTag: 'CARD-OUTAGE' }]);
    // Presented once, not again on the next reconnection.
    await goOffline(cp);
    await comeBack(cp);
    expect(cp.cards()).toEqual(['CARD-OUTAGE']);
    expect(cp.starts()).toHaveLength(1);
  });

  it('is not presented when its car left before the charge point was back', async () => {
    const cp = await chargePoint([{ atMs: startMs + minute, untilMs: startMs + 2 * minute, idTag: 'CARD-GONE', battery }]);
    await startOnline(cp);
    await goOffline(cp);
    await cp.sim.advance(3 * minute);
    expect(cp.sim.battery).toBeUndefined();
    await comeBack(cp);
    expect(cp.cards()).toEqual([]);
    expect(cp.starts()).toEqual([]);
  });

  it('is not presented for another car, without a card, plugged in after it during the outage', async () => {
    const cp = await chargePoint([
      { atMs: startMs + minute, untilMs: startMs + 2 * minute, idTag: 'CARD-GONE', battery },
      { atMs: startMs + 3 * minute, battery },
    ]);
    await startOnline(cp);
    await goOffline(cp);
    await cp.sim.advance(4 * minute);
    expect(cp.sim.battery).toBeDefined();
    await comeBack(cp);
    expect(cp.cards()).toEqual([]);
    expect(cp.starts()).toEqual([]);
    expect(cp.sim.status).toBe('Preparing');
  });

  it('the last card presented during the outage is the one presented', async () => {
    const cp = await chargePoint([
      { atMs: startMs + minute, untilMs: startMs + 2 * minute, idTag: 'CARD-GONE', battery },
      { atMs: startMs + 3 * minute, idTag: 'CARD-HERE', battery },
    ]);
    await startOnline(cp);
    await goOffline(cp);
    await cp.sim.advance(4 * minute);
    cp.relay.restore();
    await transactionStarted(cp);
    expect(cp.cards()).toEqual(['CARD-HERE']);
    expect(cp.starts()).toEqual([{ transactionId: cp.sim.transactionId, idTag: 'CARD-HERE' }]);
  });
});
