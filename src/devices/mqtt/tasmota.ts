/**
 * Tasmota over MQTT: `cmnd/<topic>/POWER<n>` ON/OFF, confirmed by `stat/<topic>/POWER<n>` (single
 * relay devices answer on `POWER`), telemetry `tele/<topic>/SENSOR` (`ENERGY.Total` kWh,
 * `ENERGY.Power` W, `<sensor>.Temperature`), on demand `Status 10` → `stat/<topic>/STATUS10`,
 * availability `tele/<topic>/LWT`.
 *
 * Lease: Tasmota's `PulseTime<n>` switches a relay OFF a set time after it went ON. It can only
 * serve as a device-side lease when blocking means relay ON (`blockedState: 'on'`); then each
 * block sets `PulseTime<n>` to the lease first. A cap's block (blocked = ON) sets `PulseTime` to
 * the cap's end, at most 64 800 s (18 h, `PulseTime 64900`): the relay falls back by itself when
 * the window ends.
 *
 * With the default wiring (blocked = OFF) `PulseTime` cannot end a block. With `releaseRule`
 * wattshift owns one rule set and one rule timer on the device: the rule set holds
 * `ON Rules#Timer=<x> DO Power<n> ON ENDON`, written and enabled (`Rule<r> 1`) before the first
 * block after each `LWT Online` (a device start or reconnection), and each block arms
 * `RuleTimer<x>` to the lease, confirmed, before the relay goes OFF; allow switches the relay ON
 * and clears the timer (`RuleTimer<x> 0`). The device then ends a block by itself, a cap's block
 * at the window's end (at most 32 700 s: the timer takes 0..32766 s in every firmware). A rule
 * timer lives in RAM: a reboot loses it, so `PowerOnState 1` (heat after power-up) is what ends
 * a block over a reboot. Without `releaseRule` the default wiring has no device-side expiry:
 * `PowerOnState 1` makes a reboot heat, and the supervisor releases.
 *
 * Liveness is per device: Tasmota sends telemetry (`tele/<topic>/STATE`, `SENSOR`) only every
 * `TelePeriod` (300 s as shipped) and relay changes as they happen, so a value older than
 * `staleAfterS` is refreshed with one `Status 10` (shared by every reader); the device is stale only
 * when that goes unanswered, and unreachable while its LWT says `Offline`. For close control of
 * the slot's energy, `TelePeriod 10`…`60` on the device gives fresher counters without requests.
 *
 * Source: Tasmota documentation (tasmota.github.io/docs): "Commands" (`Power`, `PulseTime` with
 * 112..64900 = value − 100 seconds, `Status 10`, `TelePeriod` 10..3600 s, default 300,
 * `PowerOnState`, `Rule<x>` 0/1 = disable/enable or the rule text, `RuleTimer<x>` x = 1..8 in
 * seconds, documented as 0..32766 until 2020 and 0..65535 since), "Rules" (three rule sets
 * `Rule1`..`Rule3`, stored in flash so they survive a reboot; the trigger `Rules#Timer=<x>` fires
 * when `RuleTimer<x>` expires) and "MQTT" (`cmnd`/`stat`/`tele` prefixes, `tele/<topic>/LWT`
 * Online/Offline as the last will, `STATE` with `POWER<n>` at each TelePeriod). The answers to
 * `Rule<x>` (`{"Rule1":{"State":"ON",…,"Rules":"…"}}`, older builds `{"Rule1":"ON",…,"Rules":"…"}`)
 * and `RuleTimer<x>` (`{"T1":<s left>,…,"T8":…}`), and rule timers kept in RAM only, are as the
 * firmware's rules driver (xdrv_10_rules.ino) writes them.
 */
import { z } from 'zod';
import { WattshiftError } from '../../errors.js';
import { LatestValues, askingReader, requestAnswer } from './values.js';
import { guard, limits, parseJson, parseWith, plausible, pushedEnergyMeter, withTimeout } from './util.js';
import type { MqttDevice, MqttDeviceDeps, MqttDeviceOptions, TasmotaSource } from './types.js';

/** Longest lease PulseTime can time: 64900 − 100 s. */
export const tasmotaMaxLeaseMs = (64_900 - 100) * 1000;

/** PulseTime encoding: values 112..64900 mean (value − 100) seconds. */
export function pulseTimeForLease(leaseMs: number): number {
  const s = Math.ceil(leaseMs / 1000);
  return Math.min(64_900, Math.max(112, s + 100));
}

/**
 * Longest lease a rule timer times: 32 700 s, a minute under the 32 766 s every firmware takes
 * (the documented range before 2020; 65 535 since), so a lease rounded up to whole seconds fits.
 */
export const tasmotaRuleMaxLeaseMs = 32_700 * 1000;

/** `RuleTimer` seconds for a lease: rounded up, 1..32700. */
export function ruleTimerForLease(leaseMs: number): number {
  return Math.min(tasmotaRuleMaxLeaseMs / 1000, Math.max(1, Math.ceil(leaseMs / 1000)));
}

/** The rule that ends a block (relay OFF) when the rule timer runs out. */
export function releaseRuleText(timer: number, relay: number): string {
  return `ON Rules#Timer=${timer} DO Power${relay} ON ENDON`;
}

const numberOrArray = z.union([z.number(), z.array(z.number())]);
const energySchema = z.looseObject({ Total: z.number().optional(), Power: numberOrArray.optional() });
/** A rule set in a `Rule<x>` answer: `{"State":"ON","Rules":"…"}`, or in older builds the state as the value and `Rules` beside it. */
const ruleSetSchema = z.looseObject({ State: z.string(), Rules: z.string() });
const sameRule = (a: string, b: string): boolean => a.replace(/\s+/g, ' ').trim().toLowerCase() === b.replace(/\s+/g, ' ').trim().toLowerCase();

export function createTasmotaDevice(source: TasmotaSource, deps: MqttDeviceDeps, options: MqttDeviceOptions = {}): MqttDevice {
  const { connection, clock } = deps;
  const relay = source.relay ?? 1;
  const sensor = source.sensor ?? 'DS18B20';
  const fullTopic = source.fullTopic ?? '%prefix%/%topic%/';
  const blockOn = (source.blockedState ?? 'off') === 'on';
  // PulseTime ends a block wired blocked = ON; the release rule is for the default wiring only.
  const releaseRule = blockOn ? undefined : source.releaseRule;
  const deviceLease = blockOn || releaseRule !== undefined;
  const device = options.id ?? source.topic;
  const requestTimeoutMs = options.requestTimeoutMs ?? 5000;
  const log = deps.logger.child({ component: 'tasmota', device });
  const values = new LatestValues({ device, clock, staleAfterMs: (options.staleAfterS ?? 120) * 1000, isConnected: () => connection.connected });
  const topic = (prefix: 'cmnd' | 'stat' | 'tele', command: string): string => {
    const base = fullTopic.replace('%prefix%', prefix).replace('%topic%', source.topic);
    return `${base.endsWith('/') ? base : `${base}/`}${command}`;
  };

  const applySns = (sns: unknown): void => {
    if (sns === null || typeof sns !== 'object') throw new WattshiftError('DEVICE_BAD_VALUE', `${device}: SENSOR is not an object`);
    const record = sns as Record<string, unknown>;
    if (record.ENERGY !== undefined) {
      guard(
        (e) => {
          values.bad('energyKwh', e);
          values.bad('powerW', e);
        },
        () => {
          const energy = parseWith(energySchema, record.ENERGY, `${device} ENERGY`);
          if (energy.Total !== undefined) values.put('energyKwh', plausible(energy.Total, ...limits.energyKwh, `${device} ENERGY.Total`));
          if (energy.Power !== undefined) {
            const p = Array.isArray(energy.Power) ? energy.Power[relay - 1] : energy.Power;
            values.put('powerW', plausible(p, ...limits.powerW, `${device} ENERGY.Power`));
          }
        },
      );
    }
    if (record[sensor] !== undefined) {
      guard(
        (e) => values.bad('temperatureC', e),
        () => {
          const t = atObject(record[sensor]).Temperature;
          values.put('temperatureC', plausible(t, ...limits.temperatureC, `${device} ${sensor}.Temperature`));
        },
      );
    }
  };
  const badAll = (err: WattshiftError): void => {
    for (const name of ['energyKwh', 'powerW', 'temperatureC']) values.bad(name, err);
    log.debug({ code: err.code, err: err.message }, 'bad SENSOR payload');
  };
  const applyPower = (text: string): void => {
    const t = text.trim().toUpperCase();
    if (t === 'ON' || t === 'OFF') values.put('relay', t === 'ON');
  };

  const powerNames = relay === 1 ? ['POWER', 'POWER1'] : [`POWER${relay}`];
  /** Put on each `Status 10` answer: a request is done when the next one arrives, whatever it carries. */
  const statusKey = 'statusAnswer';
  const unsubscribers = [
    connection.subscribe(topic('tele', 'SENSOR'), (_t, p) => guard(badAll, () => applySns(parseJson(p, `${device} SENSOR`)))),
    ...['STATUS10', 'STATUS8'].map((name) =>
      connection.subscribe(topic('stat', name), (_t, p) => {
        guard(badAll, () => applySns(atObject(parseJson(p, `${device} ${name}`)).StatusSNS));
        values.put(statusKey, true);
      }),
    ),
    connection.subscribe(topic('tele', 'STATE'), (_t, p) => {
      try {
        const st = atObject(JSON.parse(p.toString()) as unknown);
        for (const name of powerNames) if (typeof st[name] === 'string') applyPower(st[name] as string);
      } catch {
        log.debug('ignored unparsable STATE');
      }
    }),
    connection.subscribe(topic('tele', 'LWT'), (_t, p) => {
      const online = p.toString().trim().toLowerCase() === 'online';
      // A device that comes online may have restarted (or been reconfigured): the rule set is written again before the next block.
      if (online) ruleWritten = false;
      values.setOffline(
        online ? undefined : new WattshiftError('DEVICE_UNREACHABLE', `${device} reports itself offline (LWT)`, { details: { device } }),
      );
    }),
    ...powerNames.map((name) => connection.subscribe(topic('stat', name), (_t, p) => applyPower(p.toString()))),
    connection.subscribe(topic('stat', 'RESULT'), (_t, p) => {
      try {
        const r = atObject(JSON.parse(p.toString()) as unknown);
        for (const name of powerNames) if (typeof r[name] === 'string') applyPower(r[name] as string);
        for (const listener of [...resultListeners]) listener(r);
      } catch {
        // RESULT carries answers to every command; the ones we do not understand are not ours.
      }
    }),
  ];

  /**
   * Reads a value; when missing, older than `staleAfterS` or bad, asks for `Status 10` (once for all
   * readers) and reads again. Telemetry comes only every `TelePeriod` (300 s as shipped), so an old
   * value means a quiet period, not a lost device: the device is stale only when it does not answer.
   */
  const readFresh = askingReader(
    values,
    ['DEVICE_STALE', 'DEVICE_BAD_VALUE'],
    (signal) =>
      requestAnswer(
        values,
        statusKey,
        clock,
        requestTimeoutMs,
        `${device} Status 10`,
        () => connection.publish(topic('cmnd', 'STATUS'), '10', { qos: 1 }),
        signal,
      ),
    (err) => log.debug({ err }, 'status request failed'),
  );

  /** Listeners for `stat/<topic>/RESULT`, each waiting for the answer to one command. */
  const resultListeners = new Set<(r: Record<string, unknown>) => void>();
  /** Whether the release rule was written and confirmed enabled since the device last came online. */
  let ruleWritten = false;
  /**
   * Sends a command and waits for the RESULT that `accept` recognises as its answer. `Unknown`
   * or `Error` means the device does not take it (a build without rules): TASMOTA_RULE_REFUSED.
   */
  const command = (what: string, send: () => Promise<void>, accept: (r: Record<string, unknown>) => boolean, signal: AbortSignal): Promise<void> =>
    withTimeout(
      clock,
      requestTimeoutMs,
      signal,
      `${device} ${what}`,
      (s) =>
        new Promise<void>((resolve, reject) => {
          const done = (err?: unknown): void => {
            resultListeners.delete(listener);
            s.removeEventListener('abort', onAbort);
            if (err === undefined) resolve();
            else reject(err);
          };
          const listener = (r: Record<string, unknown>): void => {
            if (r.Command === 'Unknown' || r.Command === 'Error') {
              done(new WattshiftError('TASMOTA_RULE_REFUSED', `${device} does not take ${what} (answer: ${r.Command})`, { details: { device } }));
            } else if (accept(r)) done();
          };
          const onAbort = (): void => done(s.reason);
          resultListeners.add(listener);
          s.addEventListener('abort', onAbort, { once: true });
          send().catch(done);
        }),
    );
  const ensureReleaseRule = async (rule: { rule: number; timer: number }, signal: AbortSignal): Promise<void> => {
    if (ruleWritten) return;
    const text = releaseRuleText(rule.timer, relay);
    const name = `Rule${rule.rule}`;
    const enabledWithText = (r: Record<string, unknown>): boolean => {
      const nested = ruleSetSchema.safeParse(r[name]);
      const set = nested.success ? nested.data : ruleSetSchema.safeParse({ State: r[name], Rules: r.Rules }).data;
      return set !== undefined && set.State.toUpperCase() === 'ON' && sameRule(set.Rules, text);
    };
    await command(
      name,
      async () => {
        await connection.publish(topic('cmnd', name), text, { qos: 1 });
        await connection.publish(topic('cmnd', name), '1', { qos: 1 });
      },
      enabledWithText,
      signal,
    );
    ruleWritten = true;
    log.info({ rule: name, text }, 'release rule written to the device');
  };
  /** Arms (seconds > 0) or clears (0) the release timer, confirmed by the device's remaining time. */
  const setRuleTimer = (timer: number, seconds: number, signal: AbortSignal): Promise<void> => {
    const key = `T${timer}`;
    // The answer gives whole seconds left, counted from the moment it was set.
    const armed = (r: Record<string, unknown>): boolean =>
      typeof r[key] === 'number' && (seconds === 0 ? r[key] === 0 : (r[key] as number) >= seconds - 5);
    return command(`RuleTimer${timer}`, () => connection.publish(topic('cmnd', `RuleTimer${timer}`), String(seconds), { qos: 1 }), armed, signal);
  };

  let pulseSent: number | undefined;
  const setRelay = (on: boolean, signal: AbortSignal): Promise<void> =>
    withTimeout(clock, requestTimeoutMs, signal, `${device} POWER${relay}`, async (s) => {
      let seen = values.version('relay');
      await connection.publish(topic('cmnd', `POWER${relay}`), on ? 'ON' : 'OFF', { qos: 1 });
      for (;;) {
        await values.waitNewer('relay', seen, s);
        seen = values.version('relay');
        if (values.peek('relay') === on) return;
      }
    });

  return {
    heaterSwitch: {
      deviceLease,
      ...(blockOn ? { maxLeaseMs: tasmotaMaxLeaseMs } : releaseRule ? { maxLeaseMs: tasmotaRuleMaxLeaseMs } : {}),
      block: async (leaseMs, signal) => {
        // PulseTime is a setting Tasmota keeps in flash: sent only when it changes; each ON restarts it.
        const pulse = pulseTimeForLease(leaseMs);
        if (blockOn && pulse !== pulseSent) {
          await connection.publish(topic('cmnd', `PulseTime${relay}`), String(pulse), { qos: 1 });
          pulseSent = pulse;
        }
        // The timer is armed before the relay goes OFF: a block is never on the device without its end.
        if (releaseRule) {
          await ensureReleaseRule(releaseRule, signal);
          await setRuleTimer(releaseRule.timer, ruleTimerForLease(leaseMs), signal);
        }
        await setRelay(blockOn, signal);
      },
      allow: async (signal) => {
        await setRelay(!blockOn, signal);
        // Cleared only once the relay is ON, so that a failed allow still leaves the timer to end the block.
        if (releaseRule) await setRuleTimer(releaseRule.timer, 0, signal);
      },
    },
    energyMeter: pushedEnergyMeter(
      (signal) => readFresh('energyKwh', signal),
      (kwh) => kwh as number,
    ),
    powerMeter: { readPowerW: async (signal) => (await readFresh('powerW', signal)).value as number },
    thermometer: { readTemperatureC: async (signal) => (await readFresh('temperatureC', signal)).value as number },
    close() {
      for (const u of unsubscribers) u();
      resultListeners.clear();
    },
  };
}

function atObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new WattshiftError('DEVICE_BAD_VALUE', `expected a JSON object, got ${JSON.stringify(value)?.slice(0, 60)}`);
  }
  return value as Record<string, unknown>;
}
