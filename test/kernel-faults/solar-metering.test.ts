/**
 * A solar device in the daemon, on the simulation kernel: the SunSpec inverter simulator on the
 * home's clock behind a real Modbus TCP bus, read by the daemon through `kind: solar`. The hourly
 * rows of its subject equal what the simulator's counter rose in each hour, through sunset (the
 * inverter asleep with stale registers), and the device is registered as a SolarInverter.
 */
import { afterEach, expect, it } from 'vitest';
import { startSunSpecInverter } from '../../src/sandbox/devices/sunspec-inverter-sim.js';
import { hourMs } from '../helpers/daemon-harness.js';
import { closeFaultHomes, faultHome } from './fault-home.js';

afterEach(closeFaultHomes, 60_000);

it('meters a SunSpec inverter hour by hour as the simulator counts, through sunset', async () => {
  const home = await faultHome('solar-metering', { startLocal: [10, 0] });
  const inverter = await startSunSpecInverter({ clock: home.clock, seed: 3, peakW: 8000, initialWh: 4_321_000 });
  const counters = new Map<number, number>();
  home.home.every(60_000, async () => {
    const s = inverter.state();
    if (s.nowMs % hourMs === 0) counters.set(s.nowMs, s.counterWh);
  });
  const config = {
    ...home.config,
    modbus: { ...home.config.modbus, pv: { type: 'tcp' as const, host: inverter.host, port: inverter.port, timeoutMs: 2000 } },
    devices: [...home.config.devices!, { id: 'pv', kind: 'solar' as const, source: { type: 'sunspec' as const, bus: 'pv' }, model: { peakKwp: 8 } }],
  };
  const registration = await home.register(config);
  expect(registration.resources['pv']).toBeDefined();
  const resource = await home.spark.getResource(registration.resources['pv']!);
  expect(resource.resourceType).toBe('SolarInverter');

  const daemon = await home.startDaemon(config);
  expect(daemon.running).toBe(true);
  // A January day in Oslo: the sun sets at about 15:30 local; run past it into the night.
  const endMs = home.localTime(0, 18, 0);
  await home.until(endMs);
  expect(inverter.state().state).toBe(2);
  await daemon.stop();
  await inverter.close();

  const rows = home.readStore((s) => s.readHourly('device:pv', home.startMs, endMs));
  const measured = rows.filter((r) => r.quality === 'measured');
  expect(measured.length).toBeGreaterThanOrEqual(6);
  let produced = 0;
  let compared = 0;
  for (const r of measured) {
    const from = counters.get(r.hourStartMs);
    const to = counters.get(r.hourStartMs + hourMs);
    if (from === undefined || to === undefined) continue;
    // Production is kept positive: the kWh the inverter put out in the hour, to the Wh.
    expect(r.kwh, new Date(r.hourStartMs).toISOString()).toBeCloseTo((to - from) / 1000, 3);
    produced += r.kwh;
    compared += 1;
  }
  expect(compared).toBeGreaterThanOrEqual(6);
  expect(produced).toBeGreaterThan(1);
  // The night's hours: asleep, nothing produced though the registers still show the evening's power.
  const night = measured.filter((r) => r.hourStartMs >= home.localTime(0, 16, 0));
  expect(night.length).toBeGreaterThan(0);
  for (const r of night) expect(r.kwh).toBe(0);
});
