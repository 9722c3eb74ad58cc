/**
 * An SG Ready heat pump in the whole daemon: the demo world (sandbox API, broker, Modbus tank, go-e
 * charger) plus a simulated heat pump water heater whose SG Ready contacts hang on a two-channel
 * Modbus TCP relay board. wattshift plans it as a tank in electric energy, drives both contacts
 * every tick over a simulated afternoon and night on the simulation kernel's virtual clock, keeps every lock within
 * the label's 2 hours and its own daily budget, never locks it below the floor, and leaves it in
 * normal operation when it stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import type { SgState } from '../src/core/heat-pump.js';
import { localAt } from '../src/demo/environment.js';
import { startSgReadyHeatPump, type SgReadyHeatPump } from '../src/sandbox/devices/sg-ready-heat-pump.js';
import { demoHome } from './helpers/demo-home.js';

const H = 3_600_000;
const day0 = Date.UTC(2026, 0, 14, 12);
const startMs = localAt(day0, 0, 16, 0);
const endMs = localAt(day0, 1, 6, 0);
const floorC = 45;

/** The local day (in the demo's time zone) a time falls on. */
const localDay = (ms: number): number => (ms >= localAt(day0, 1, 0) ? 1 : 0);

interface Sample {
  atMs: number;
  /** What the control loop decided for the pump this tick. */
  decided: SgState;
  /** The contacts as the pump sees them once the tick's commands are applied. */
  contacts: SgState;
  tempC: number;
}

describe('an SG Ready heat pump driven by the daemon', () => {
  const home = demoHome({ name: 'heatpump', startMs });
  const { planAtHour } = home;
  let pump: SgReadyHeatPump;
  const samples: Sample[] = [];
  let contactsAfterStop: SgState | undefined;
  let viewBeforeStop: ReturnType<App['view']> | undefined;

  beforeAll(async () => {
    const env = await home.startWorld();
    pump = await startSgReadyHeatPump({
      clock: home.clock,
      startMs,
      electricKw: 0.5,
      cop: 2.8,
      normalC: 50,
      boostC: 60,
      maxC: 65,
      tank: { volumeL: 200, initialC: 52 },
    });
    const input = env.config;
    const source = (extra: Record<string, unknown>) => ({ type: 'modbus', bus: 'hp', unitId: 1, profile: 'wattshift-sim-heat-pump', ...extra });
    const config = parseConfig({
      ...input,
      modbus: { ...input.modbus, hp: { type: 'tcp', host: pump.host, port: pump.port, timeoutMs: 2000 } },
      devices: [
        ...(input.devices ?? []),
        {
          id: 'hp',
          name: 'Heat pump',
          kind: 'heatPump',
          staleAfterS: 900,
          contacts: { relay1: source({ channel: 0 }), relay2: source({ channel: 1 }) },
          meter: source({ point: 'energyKwh' }),
          thermometer: source({ point: 'temperatureC' }),
          model: { volumeL: 200, electricKw: 0.5, cop: 2.8, normalC: 50, boostC: 60, maxC: 65, floorC, legionella: { enabled: false } },
        },
      ],
    }).config;
    await home.register(config);
    const app = await home.startApp(config, {
      controlTickMs: 60_000,
      onControlTick: (snap) => {
        const s = snap.decision.setpoints.find((x) => x.kind === 'heatPump');
        const p = pump.state();
        if (s?.kind === 'heatPump') samples.push({ atMs: snap.atMs, decided: s.state, contacts: p.contacts, tempC: p.tempC });
      },
    });
    await home.until(endMs);
    viewBeforeStop = app.view();
    await app.stop();
    contactsAfterStop = pump.state().contacts;
  }, 150_000);

  afterAll(() => home.close(() => pump?.close()));

  it('plans the pump under its own id, in electric energy (at most its 0.5 kW per hour)', () => {
    const evening = planAtHour.get(Math.floor(localAt(day0, 0, 18) / H) * H);
    expect(Object.keys(evening?.tanks ?? {}).sort()).toEqual(['hp', 'tank']);
    const hpSlots = evening!.slots.map((s) => s.tanks?.hp?.energyKwh ?? 0);
    expect(Math.max(...hpSlots)).toBeLessThanOrEqual(0.5 + 1e-6);
    expect(hpSlots.some((kwh) => kwh > 0.05)).toBe(true);
  });

  it('drives both contacts to the state it decides, tick by tick', () => {
    expect(samples.length).toBeGreaterThan(500);
    // On the virtual clock every tick's writes have landed before the next tick.
    expect(samples.filter((s) => s.contacts !== s.decided)).toEqual([]);
    // The plan's heat is asked for with the recommendation, in the slots it planned.
    expect(samples.some((s) => s.decided === 'boost')).toBe(true);
  });

  it("boosts in the plan's hours and not in hours it left empty", () => {
    let checked = 0;
    for (const [hour, plan] of planAtHour) {
      const slot = plan.slots.find((s) => s.startMs === hour);
      const kwh = slot?.tanks?.hp?.energyKwh ?? 0;
      const ticks = samples.filter((s) => s.atMs >= hour + 2 * 60_000 && s.atMs < hour + H);
      if (ticks.length === 0 || (slot?.price ?? 0) < 0) continue;
      if (kwh === 0) {
        checked += 1;
        expect(
          ticks.filter((s) => s.decided === 'boost' && s.tempC >= floorC),
          new Date(hour).toISOString(),
        ).toEqual([]);
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('keeps every lock within 2 hours and the daily budget, never below the floor, and ends in normal operation', () => {
    const history = pump.history();
    const locks = history.flatMap((h, i) => (h.operating === 'block' ? [{ fromMs: h.atMs, toMs: history[i + 1]?.atMs ?? endMs }] : []));
    for (const l of locks) expect(l.toMs - l.fromMs).toBeLessThanOrEqual(2 * H + 2 * 60_000);
    // Locks do happen (the evening is dear), at most 3 a local day, an hour apart at least.
    expect(locks.length).toBeGreaterThan(0);
    const byDay = new Map<number, number>();
    for (const l of locks) byDay.set(localDay(l.fromMs), (byDay.get(localDay(l.fromMs)) ?? 0) + 1);
    for (const n of byDay.values()) expect(n).toBeLessThanOrEqual(3);
    locks.slice(1).forEach((l, i) => expect(l.fromMs - locks[i]!.toMs).toBeGreaterThanOrEqual(60 * 60_000 - 60_000));
    for (const s of samples.filter((x) => x.decided === 'block')) expect(s.tempC).toBeGreaterThanOrEqual(floorC - 0.5);
    expect(contactsAfterStop).toBe('normal');
  });

  it('shows the pump and its SG Ready state in the view', () => {
    const d = viewBeforeStop?.devices.find((x) => x.id === 'hp');
    expect(d).toMatchObject({ kind: 'heatPump', floorC });
    expect(d?.sgReady?.state).toMatch(/^(block|normal|boost|forced)$/);
  });
});
