/** `wattshift check` says, per configured device, whether it holds an LPC cap with wattshift gone (docs/caps.md). */
import { describe, expect, it } from 'vitest';
import { inProcess, tempConfig } from './fixtures/config/cli-helpers.js';

describe('wattshift check: caps', { timeout: 120_000 }, () => {
  it('names the devices that can hold a cap by themselves, and why the others cannot', async () => {
    const { file } = tempConfig(
      [
        'mqtt: {url: "mqtt://127.0.0.1:1883"}',
        'modbus: {main: {type: tcp, host: 127.0.0.1}}',
        'devices:',
        '  - {id: shelly-tank, kind: hotWaterTank, switch: {type: shelly, topicPrefix: shellyplus1pm-a}, model: {volumeL: 200, elementKw: 2}}',
        '  - {id: tasmota-nc, kind: hotWaterTank, switch: {type: tasmota, topic: t1, blockedState: "on"}, model: {volumeL: 200, elementKw: 2}}',
        '  - {id: tasmota-plain, kind: hotWaterTank, switch: {type: tasmota, topic: t2}, model: {volumeL: 200, elementKw: 2}}',
        '  - {id: tasmota-rule, kind: hotWaterTank, switch: {type: tasmota, topic: t3, releaseRule: {rule: 2, timer: 5}}, model: {volumeL: 200, elementKw: 2}}',
        '  - {id: timer-board, kind: hotWaterTank, switch: {type: modbus, bus: main, unitId: 2, profile: wattshift-sim-tank}, model: {volumeL: 200, elementKw: 2}}',
        '  - {id: coil, kind: hotWaterTank, switch: {type: modbus, bus: main, unitId: 3, profile: generic-relay}, model: {volumeL: 200, elementKw: 2}}',
        '  - {id: car, kind: evCharger, charger: {type: goe, topicPrefix: go-eCharger/1}, model: {capacityKwh: 60}}',
        '  - {id: wallbox, kind: evCharger, charger: {type: modbus, bus: main, unitId: 4, profile: openwb-secondary}, model: {capacityKwh: 60}}',
      ].join('\n'),
    );
    const r = await inProcess(['check', '--config', file]);
    expect(r.code, r.stderr).toBe(0);
    const line = (id: string): string => r.stdout.split('\n').find((l) => l.startsWith(`  ${id}: `)) ?? '';
    expect(line('shelly-tank')).toContain('holds an LPC cap by itself up to 24 h (Shelly toggle_after)');
    expect(line('tasmota-nc')).toContain('holds an LPC cap by itself up to 18 h (Tasmota PulseTime)');
    expect(line('tasmota-plain')).toContain('cannot hold an LPC cap by itself (Tasmota blocking with OFF has no timer');
    expect(line('tasmota-rule')).toContain('holds an LPC cap by itself up to 9 h (Tasmota RuleTimer5 with the release rule in Rule2)');
    expect(line('timer-board')).toContain('holds an LPC cap by itself up to 18 h (the release timer of profile wattshift-sim-tank)');
    expect(line('coil')).toContain('cannot hold an LPC cap by itself (profile generic-relay has no release timer)');
    expect(line('car')).toContain('cannot hold an LPC cap by itself (goe charger has no timed limit wattshift can set)');
    expect(line('wallbox')).toContain(
      'holds any LPC cap by itself (profile openwb-secondary: it stops charging 80 s after wattshift goes silent, and charges again only when wattshift returns)',
    );
    // A Tasmota wired blocked = ON, or with the release rule, ends a block by itself: no lease warning for it.
    expect(r.stderr).not.toContain('devices.tasmota-nc.switch');
    expect(r.stderr).not.toContain('devices.tasmota-rule.switch');
    expect(r.stderr).toContain('devices.tasmota-plain.switch: the relay has no timer');
  });
});
