/**
 * The OCPP test world: the central system on 127.0.0.1, one charger device on connector 1 and the
 * simulated charge point, optionally through a TCP relay that a test can cut (a network drop).
 */
import { connect, createServer, type Socket } from 'node:net';
import { expect } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createCentralSystem, type CentralSystem } from '../../src/devices/ocpp/central-system.js';
import { createOcppCharger, type OcppCharger, type SessionTagMemory } from '../../src/devices/ocpp/ocpp-charger.js';
import { createOcppChargePointSim, type OcppChargePointSim } from '../../src/sandbox/devices/ocpp-charge-point-sim.js';
import type { GoeSimPlug } from '../../src/sandbox/devices/goe-sim.js';
import { eventually } from './aedes.js';
import { memoryLogger } from '../fixtures/modbus/servers.js';

export const startMs = Date.UTC(2026, 0, 12, 0, 0);
export const password = 'home-charger-secret-1';
export const never = new AbortController().signal;

export interface World {
  clock: ManualClock;
  cs: CentralSystem;
  port: number;
  charger: OcppCharger;
  sim: OcppChargePointSim;
  lines: Record<string, unknown>[];
  /** The relay between the charge point and the central system, when asked for. */
  relay: TcpRelay | undefined;
  /** Moves the central system's clock and the charge point together. */
  step(ms: number): Promise<void>;
}

/** What a test opened, closed after it (newest first) by `closeOpened`. */
export const open: { close(): Promise<unknown> }[] = [];
export async function closeOpened(): Promise<void> {
  for (const o of open.splice(0).reverse()) await o.close().catch(() => undefined);
}

export async function startCentral(clock: ManualClock, logger = memoryLogger().logger, port = 0): Promise<{ cs: CentralSystem; port: number }> {
  const cs = createCentralSystem({
    host: '127.0.0.1',
    port,
    heartbeatIntervalS: 30,
    meterValueSampleIntervalS: 60,
    chargePoints: [{ id: 'cp1', password }],
    requestTimeoutMs: 2000,
    clock,
    logger,
  });
  open.push(cs);
  return { cs, port: await cs.listen() };
}

export async function world(
  opts: { plugged?: boolean; plugs?: GoeSimPlug[]; statePath?: string; safeCurrentA?: number; relay?: boolean; sessionTags?: SessionTagMemory } = {},
): Promise<World> {
  const clock = new ManualClock(startMs);
  const { logger, lines } = memoryLogger();
  const { cs, port } = await startCentral(clock, logger);
  const charger = createOcppCharger(cs.link('cp1'), {
    id: 'car',
    connectorId: 1,
    idTag: 'wattshift',
    maxCurrentA: 16,
    safeCurrentA: opts.safeCurrentA ?? 6,
    leaseS: 600,
    staleAfterS: 120,
    clock,
    logger,
    ...(opts.sessionTags ? { sessionTags: opts.sessionTags } : {}),
  });
  open.push({ close: async () => charger.close() });
  const relay = opts.relay ? await startTcpRelay(port) : undefined;
  if (relay) open.push(relay);
  const sim = createOcppChargePointSim({
    url: `ws://127.0.0.1:${relay?.port ?? port}/ocpp`,
    identity: 'cp1',
    password,
    startMs,
    plugs: opts.plugs ?? (opts.plugged === false ? [] : [{ atMs: startMs, battery: { capacityKwh: 60, socPct: 20 } }]),
    ...(opts.statePath ? { statePath: opts.statePath } : {}),
    reconnectMs: { initial: 50, max: 200 },
  });
  open.push(sim);
  await sim.start();
  await eventually(async () => {
    await sim.settle();
    expect(sim.profiles().some((p) => p.profile.chargingProfilePurpose === 'TxDefaultProfile')).toBe(true);
    // The last of what the central system asks on a connection: the configuration keys, then the status and the meter values.
    expect(sim.config('MeterValuesSampledData')).toBe('Energy.Active.Import.Register,Power.Active.Import');
    expect(sim.received().filter((m) => m === 'TriggerMessage').length).toBeGreaterThanOrEqual(2);
  });
  return {
    clock,
    cs,
    port,
    charger,
    sim,
    lines,
    relay,
    async step(ms) {
      for (let t = 0; t < ms; t += 10_000) {
        await sim.advance(Math.min(10_000, ms - t));
        await clock.advance(Math.min(10_000, ms - t));
      }
      await sim.settle();
    },
  };
}

export interface TcpRelay {
  readonly port: number;
  /** Drops every connection through the relay and refuses new ones, as a network outage does. */
  cut(): void;
  /** Lets connections through again. */
  restore(): void;
  close(): Promise<void>;
}

/** A TCP relay on 127.0.0.1 to `targetPort`. */
export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let down = false;
  const server = createServer((inbound) => {
    if (down) return void inbound.destroy();
    const outbound = connect(targetPort, '127.0.0.1');
    for (const [a, b] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      sockets.add(a);
      a.on('error', () => undefined);
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      down = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A daemon config with the central system on 127.0.0.1:`port` and one ocpp charger, `car` on cp1. */
export function ocppConfig(port: number): Config {
  return parseConfig(
    {
      version: 1,
      site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
      spark: { clientId: 'c', clientSecret: 'x' },
      storage: { path: ':memory:' },
      ocpp: { host: '127.0.0.1', port },
      devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'ocpp', chargePointId: 'cp1', password }, model: { capacityKwh: 60 } }],
    },
    { env: {} },
  ).config;
}
