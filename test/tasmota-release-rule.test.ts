/**
 * A Tasmota relay in the default wiring (blocked = OFF) with `releaseRule`: wattshift writes
 * `ON Rules#Timer=<x> DO Power<n> ON ENDON` into the rule set it owns, arms `RuleTimer<x>` before
 * each block, and the device ends the block by itself when nothing renews it. Against a real aedes
 * broker and the Tasmota simulator (rule sets in flash, rule timers on its clock, lost on a reboot).
 */
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { createMqttDevice, type MqttDevice } from '../src/devices/mqtt/index.js';
import { tasmotaRuleMaxLeaseMs } from '../src/devices/mqtt/tasmota.js';
import { createTasmotaSim, type TasmotaSim } from '../src/sandbox/devices/tasmota-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const t0 = Date.UTC(2025, 0, 6, 0, 0, 0);
const sig = () => new AbortController().signal;
const w = useMqttDeviceWorld(t0);
const topic = 'tas-rule';
const releaseRule = { rule: 2, timer: 3 };

async function start(): Promise<{ sim: TasmotaSim; dev: MqttDevice; sent: string[] }> {
  const sim = createTasmotaSim({ url: w.broker.url, topic, startMs: t0, tank: { initialC: 50 } });
  await sim.start();
  w.cleanups.push(() => sim.close());
  // What reaches the device, in order, as another client of the broker sees it.
  const sent: string[] = [];
  const watcher = await mqtt.connectAsync(w.broker.url, { clientId: 'watcher' });
  watcher.on('message', (t, p) => sent.push(`${t.slice(`cmnd/${topic}/`.length)} ${p.toString()}`));
  await watcher.subscribeAsync(`cmnd/${topic}/#`, { qos: 1 });
  w.cleanups.push(() => watcher.endAsync());
  const dev = createMqttDevice(
    { type: 'tasmota', topic, releaseRule },
    { connection: w.connection, clock: w.clock, logger: silentLogger() },
    { requestTimeoutMs: 1000 },
  );
  w.cleanups.push(() => dev.close());
  return { sim, dev, sent };
}

/** Moves the device's clock and the daemon's together. */
async function step(sim: TasmotaSim, ms: number): Promise<void> {
  await w.clock.advance(ms);
  await sim.advance(ms);
}

describe('Tasmota release rule (blocked = OFF)', () => {
  it('arms the rule timer before each block, and the relay releases itself when nothing renews it; allow clears the timer', async () => {
    const { sim, dev, sent } = await start();
    expect(dev.heaterSwitch!.deviceLease).toBe(true);
    expect(dev.heaterSwitch!.maxLeaseMs).toBe(tasmotaRuleMaxLeaseMs);

    await dev.heaterSwitch!.block(600_000, sig());
    expect(sim.relayOn).toBe(false);
    expect(sim.ruleSet(2)).toEqual({ text: 'ON Rules#Timer=3 DO Power1 ON ENDON', enabled: true });
    expect(sim.ruleTimerEndsAtMs(3)).toBe(t0 + 600_000);
    // The rule is in place and the timer armed before the relay goes OFF.
    await eventually(() => expect(sent).toEqual(['Rule2 ON Rules#Timer=3 DO Power1 ON ENDON', 'Rule2 1', 'RuleTimer3 600', 'POWER1 OFF']));

    // Nothing renews: blocked to the timer's end, heating again from there, by the device alone.
    await step(sim, 599_000);
    expect(sim.relayOn).toBe(false);
    const kwhBlocked = sim.tank.trueEnergyKwh;
    await step(sim, 2_000);
    expect(sim.relayOn).toBe(true);
    expect(sim.ruleTimerEndsAtMs(3)).toBeUndefined();
    await step(sim, 60_000);
    expect(sim.tank.trueEnergyKwh).toBeGreaterThan(kwhBlocked);

    // A renewed block rearms the timer without writing the rule again; allow clears it.
    await dev.heaterSwitch!.block(600_000, sig());
    expect(sim.ruleTimerEndsAtMs(3)).toBe(sim.nowMs + 600_000);
    await dev.heaterSwitch!.allow(sig());
    expect(sim.relayOn).toBe(true);
    expect(sim.ruleTimerEndsAtMs(3)).toBeUndefined();
    expect(sim.commands.get('RULE2')).toBe(2);
  });

  it('after the device reboots (timer lost, relay ON at power-up) writes the rule again before the next block', async () => {
    const { sim, dev } = await start();
    await dev.heaterSwitch!.block(1_800_000, sig());
    await sim.reboot();
    expect(sim.relayOn).toBe(true);
    expect(sim.ruleTimerEndsAtMs(3)).toBeUndefined();
    // The rule set is in flash: still there after the reboot.
    expect(sim.ruleSet(2).enabled).toBe(true);
    // The adapter learns of the restart from the LWT.
    await eventually(async () => {
      await dev.heaterSwitch!.block(1_800_000, sig());
      expect(sim.commands.get('RULE2')).toBe(4);
    });
    expect(sim.relayOn).toBe(false);
    expect(sim.ruleTimerEndsAtMs(3)).toBe(sim.nowMs + 1_800_000);
  });

  it('refuses to block a device that does not take rules (TASMOTA_RULE_REFUSED), leaving the relay ON', async () => {
    // A build without rules answers every rule command with {"Command":"Unknown"}.
    const device = await mqtt.connectAsync(w.broker.url, { clientId: 'no-rules' });
    w.cleanups.push(() => device.endAsync());
    const received: string[] = [];
    device.on('message', (t) => {
      received.push(t);
      void device.publishAsync('stat/bare/RESULT', JSON.stringify({ Command: 'Unknown' }));
    });
    await device.subscribeAsync('cmnd/bare/#', { qos: 1 });
    const dev = createMqttDevice(
      { type: 'tasmota', topic: 'bare', releaseRule },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { requestTimeoutMs: 1000 },
    );
    w.cleanups.push(() => dev.close());
    await expect(dev.heaterSwitch!.block(600_000, sig())).rejects.toMatchObject({ code: 'TASMOTA_RULE_REFUSED' });
    expect(received.some((t) => t.startsWith('cmnd/bare/POWER'))).toBe(false);
  });
});
