/**
 * A simulated Tasmota relay with an energy monitor and a DS18B20 on a hot water heater, on a real
 * broker, behaving as the Tasmota documentation says (tasmota.github.io/docs: "MQTT", "Commands",
 * "Telemetry"):
 * - topics from the default FullTopic `%prefix%/%topic%/`: commands on `cmnd/<topic>/<Command>`,
 *   answers on `stat/<topic>/RESULT` (and `stat/<topic>/POWER<n>` for a relay), telemetry on
 *   `tele/<topic>/STATE` and `tele/<topic>/SENSOR`;
 * - telemetry only every `TelePeriod` seconds (default 300, 10..3600) counted from the connection,
 *   no other timer: a reading between two periods comes only from `Status 10` (`stat/<topic>/STATUS10`
 *   with `StatusSNS`);
 * - the last will `tele/<topic>/LWT`: retained `Online` on connect, `Offline` from the broker;
 * - `POWER<n>` ON/OFF/TOGGLE (an empty payload asks), `PulseTime<n>` (1..111 tenths of a second,
 *   112..64900 = value − 100 seconds; the relay goes OFF that long after it went ON), `TelePeriod`;
 *   the power state and these settings are saved to flash when they change (`SetOption0` on, as
 *   shipped), counted in `flashSaves`;
 * - rules ("Rules", "Commands"): three rule sets `Rule1`..`Rule3`, each set by `Rule<x> <text>` and
 *   enabled, disabled or toggled by `Rule<x> 1` / `0` / `2`, kept in flash (they survive `reboot()`), answered as
 *   `{"Rule1":{"State":"ON",…,"Rules":"…"}}`; eight rule timers `RuleTimer<x>` (x = 1..8, seconds,
 *   0 clears, `RuleTimer0` sets all, x > 8 is an `Error`) counted on the simulated clock, answered with the seconds left
 *   of each (`{"T1":…,…,"T8":…}`), kept in RAM only (a reboot clears them). When `RuleTimer<x>`
 *   runs out, every rule `ON Rules#Timer=<x> DO <command> ENDON` of an enabled set runs its
 *   command (one command, or several joined by `Backlog … ; …`); other triggers are not simulated;
 * - `reboot()`: the connection drops (the broker publishes the last will), RAM is lost, the relay
 *   takes its `PowerOnState` (`initialOn`) and the device connects again.
 * Single-relay devices name their relay `POWER` in answers, as the firmware does.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { clientEnds, followClock, publishOnline, type MqttSimulator } from './mqtt-simulator.js';
import { TankPhysics, type TankPhysicsOptions } from './tank-physics.js';
import { brokerUrlOptions } from '../../devices/mqtt/transport.js';

export interface TasmotaSimOptions {
  url: string;
  /** The device's `%topic%`. */
  topic: string;
  startMs: number;
  /** Number of relays (default 1); the heater hangs on `relay`. */
  relays?: number;
  relay?: number;
  /** Which relay state blocks the heater (default off: the element is fed through the relay). */
  blockedState?: 'off' | 'on';
  /** Relay state at power-up (`PowerOnState`); default: heating allowed. */
  initialOn?: boolean;
  /** `TelePeriod` in seconds (default 300, as shipped). */
  telePeriodS?: number;
  tank?: Omit<TankPhysicsOptions, 'startMs'>;
  clientOptions?: IClientOptions;
}

export interface TasmotaSim extends MqttSimulator {
  readonly relayOn: boolean;
  readonly tank: TankPhysics;
  /** Current PulseTime setting of the heater relay (0 = none). */
  readonly pulseTime: number;
  /** Writes of settings or power state to flash. */
  readonly flashSaves: number;
  /** Commands received, by upper-case command name. */
  readonly commands: ReadonlyMap<string, number>;
  /** `tele/<topic>/SENSOR` messages sent. */
  readonly telemetry: number;
  crash(): Promise<void>;
  /** A restart: the last will, rule timers and PulseTime runs lost, the relay at its power-up state, then online again. */
  reboot(): Promise<void>;
  /** Rule set `Rule<x>` (1..3): its text and whether it is enabled. */
  ruleSet(x: number): { text: string; enabled: boolean };
  /** When `RuleTimer<x>` (1..8) runs out, sim ms; undefined when it is not running. */
  ruleTimerEndsAtMs(x: number): number | undefined;
}

const ruleSetCount = 3;
const ruleTimerCount = 8;
/** A rule's trigger and its command: `ON <trigger> DO <command> ENDON|BREAK`. */
const rulePattern = /\bON\s+(\S+)\s+DO\s+(.+?)\s+(?:ENDON|BREAK)\b/gi;

const pulseMs = (value: number): number => (value <= 0 ? 0 : value <= 111 ? value * 100 : (value - 100) * 1000);

export function createTasmotaSim(options: TasmotaSimOptions): TasmotaSim {
  const { topic } = options;
  const relayCount = options.relays ?? 1;
  const relay = options.relay ?? 1;
  const blockOn = (options.blockedState ?? 'off') === 'on';
  const tank = new TankPhysics({ draws: [], ...options.tank, startMs: options.startMs });
  const power = Array.from({ length: relayCount }, (_, i) => (i + 1 === relay ? (options.initialOn ?? !blockOn) : false));
  const pulse = Array.from({ length: relayCount }, () => 0);
  const pulseOffAt: (number | undefined)[] = Array.from({ length: relayCount }, () => undefined);
  const ruleSets = Array.from({ length: ruleSetCount }, () => ({ text: '', enabled: false }));
  const ruleTimerAt: (number | undefined)[] = Array.from({ length: ruleTimerCount }, () => undefined);
  /** Answers published by rules that ran while the physics moved: sent after the move. */
  const ruleOutput: [string, string][] = [];
  let telePeriodS = options.telePeriodS ?? 300;
  let nextTeleMs = options.startMs + telePeriodS * 1000;
  let flashSaves = 0;
  let silent = false;
  let client: MqttClient | undefined;
  const commands = new Map<string, number>();
  const startMs = options.startMs;

  const heaterBlocked = (): boolean => power[relay - 1] === blockOn;
  const syncTank = (): void => tank.setBlocked(heaterBlocked());
  syncTank();
  const powerName = (n: number): string => (relayCount === 1 ? 'POWER' : `POWER${n}`);
  const onOff = (on: boolean | undefined): string => (on ? 'ON' : 'OFF');
  const time = (): string => new Date(tank.nowMs).toISOString().slice(0, 19);

  const publish = async (sub: string, payload: string, retain = false): Promise<void> => {
    if (!silent) await publishOnline(client, sub, payload, { qos: retain ? 1 : 0, retain });
  };
  const sensors = (): Record<string, unknown> => ({
    Time: time(),
    ENERGY: {
      TotalStartTime: new Date(startMs).toISOString().slice(0, 19),
      Total: Number(tank.counterKwh.toFixed(3)),
      Power: Math.round(tank.powerW),
      Voltage: 230,
      Current: Number((tank.powerW / 230).toFixed(3)),
    },
    DS18B20: { Id: '01144B2A6CAA', Temperature: Number(tank.tempC.toFixed(1)) },
    TempUnit: 'C',
  });
  const state = (): Record<string, unknown> => {
    const out: Record<string, unknown> = { Time: time(), UptimeSec: Math.round((tank.nowMs - startMs) / 1000) };
    power.forEach((on, i) => (out[powerName(i + 1)] = onOff(on)));
    return out;
  };
  let sensorMessages = 0;
  const telemetry = async (): Promise<void> => {
    await publish(`tele/${topic}/STATE`, JSON.stringify(state()));
    if (!silent && client?.connected) sensorMessages++;
    await publish(`tele/${topic}/SENSOR`, JSON.stringify(sensors()));
  };

  const setPower = (n: number, on: boolean): void => {
    if (power[n - 1] !== on) flashSaves++;
    power[n - 1] = on;
    pulseOffAt[n - 1] = on && pulse[n - 1]! > 0 ? tank.nowMs + pulseMs(pulse[n - 1]!) : undefined;
    syncTank();
  };
  const powerAnswer = (n: number): [string, string][] => [
    [`stat/${topic}/RESULT`, JSON.stringify({ [powerName(n)]: onOff(power[n - 1]) })],
    [`stat/${topic}/${powerName(n)}`, onOff(power[n - 1])],
  ];
  const sendAll = async (messages: [string, string][]): Promise<void> => {
    for (const [t, p] of messages) await publish(t, p);
  };
  /** Switches relay `n` as `POWER<n> <payload>` does; undefined for a relay the device does not have. */
  const switchRelay = (n: number, payload: string): [string, string][] | undefined => {
    if (n < 1 || n > relayCount) return undefined;
    const p = payload.trim().toUpperCase();
    if (p === 'ON' || p === '1') setPower(n, true);
    else if (p === 'OFF' || p === '0') setPower(n, false);
    else if (p === 'TOGGLE' || p === '2') setPower(n, !power[n - 1]);
    return powerAnswer(n);
  };
  const ruleTimersAnswer = (): string =>
    JSON.stringify(Object.fromEntries(ruleTimerAt.map((at, i) => [`T${i + 1}`, at === undefined ? 0 : Math.floor((at - tank.nowMs) / 1000)])));
  const ruleSetAnswer = (x: number): string => {
    const set = ruleSets[x - 1]!;
    return JSON.stringify({
      [`Rule${x}`]: {
        State: onOff(set.enabled),
        Once: 'OFF',
        StopOnError: 'OFF',
        Length: set.text.length,
        Free: 511 - set.text.length,
        Rules: set.text,
      },
    });
  };
  /** Runs the commands of every enabled rule whose trigger is `trigger` (as the device does, set by set, in order). */
  const runRules = (trigger: string): void => {
    for (const set of ruleSets) {
      if (!set.enabled) continue;
      for (const m of set.text.matchAll(rulePattern)) {
        if (m[1]!.toLowerCase() !== trigger.toLowerCase()) continue;
        const body = m[2]!.trim();
        const parts = /^backlog\s/i.test(body) ? body.slice(7).split(';') : [body];
        for (const c of parts) {
          const [name = '', ...rest] = c.trim().split(/\s+/);
          const upper = name.toUpperCase();
          commands.set(upper, (commands.get(upper) ?? 0) + 1);
          if (/^POWER\d*$/.test(upper)) ruleOutput.push(...(switchRelay(Number(upper.slice(5) || '1'), rest.join(' ')) ?? []));
        }
      }
    }
  };

  const handle = async (command: string, payload: string): Promise<void> => {
    const name = command.toUpperCase();
    commands.set(name, (commands.get(name) ?? 0) + 1);
    const index = (prefix: string): number => Number(name.slice(prefix.length) || '1');
    if (/^POWER\d*$/.test(name)) {
      const answer = switchRelay(index('POWER'), payload);
      return answer ? sendAll(answer) : undefined;
    }
    if (/^RULETIMER\d*$/.test(name)) {
      const x = Number(name.slice('RULETIMER'.length) || '1');
      if (x > ruleTimerCount) return publish(`stat/${topic}/RESULT`, JSON.stringify({ Command: 'Error' }));
      const v = Number(payload);
      if (payload.trim() !== '' && Number.isFinite(v)) {
        for (let i = x === 0 ? 1 : x; i <= (x === 0 ? ruleTimerCount : x); i++) ruleTimerAt[i - 1] = v > 0 ? tank.nowMs + v * 1000 : undefined;
      }
      return publish(`stat/${topic}/RESULT`, ruleTimersAnswer());
    }
    if (/^RULE\d$/.test(name)) {
      const x = index('RULE');
      if (x < 1 || x > ruleSetCount) return;
      const set = ruleSets[x - 1]!;
      const p = payload.trim();
      // 0/1/2: disable, enable, toggle; 4..10 set the one-shot and stop-on-error flags, not simulated.
      if (/^(?:[0-9]|10)$/.test(p)) {
        const enabled = p === '2' ? !set.enabled : p === '1' ? true : p === '0' ? false : set.enabled;
        if (set.enabled !== enabled) flashSaves++;
        set.enabled = enabled;
      } else if (p !== '') {
        const text = p === '"' ? '' : p;
        if (text !== set.text) flashSaves++;
        set.text = text;
      }
      return publish(`stat/${topic}/RESULT`, ruleSetAnswer(x));
    }
    if (/^PULSETIME\d*$/.test(name)) {
      const n = index('PULSETIME');
      if (n < 1 || n > relayCount) return;
      const v = Number(payload);
      if (payload.trim() !== '' && Number.isInteger(v) && v >= 0 && v <= 64_900 && v !== pulse[n - 1]) {
        pulse[n - 1] = v;
        flashSaves++;
      }
      return publish(`stat/${topic}/RESULT`, JSON.stringify({ [`PulseTime${n}`]: { Set: pulse[n - 1], Remaining: 0 } }));
    }
    if (name === 'TELEPERIOD') {
      const v = Number(payload);
      if (payload.trim() !== '' && Number.isFinite(v)) {
        const next = v === 0 ? 0 : Math.min(3600, Math.max(10, Math.round(v)));
        if (next !== telePeriodS) flashSaves++;
        telePeriodS = next;
        nextTeleMs = tank.nowMs + telePeriodS * 1000;
      }
      return publish(`stat/${topic}/RESULT`, JSON.stringify({ TelePeriod: telePeriodS }));
    }
    if (name === 'STATUS' && (payload.trim() === '10' || payload.trim() === '8')) {
      return publish(`stat/${topic}/STATUS${payload.trim()}`, JSON.stringify({ StatusSNS: sensors() }));
    }
    return publish(`stat/${topic}/RESULT`, JSON.stringify({ Command: 'Unknown' }));
  };

  /** Moves the physics to `targetMs`, switching a relay off where its PulseTime ends and running the rules of each rule timer that runs out. */
  const physicsTo = (targetMs: number): void => {
    for (;;) {
      const due = [
        ...pulseOffAt.map((at, i) => ({ at, kind: 'pulse' as const, i })),
        ...ruleTimerAt.map((at, i) => ({ at, kind: 'rule' as const, i })),
      ]
        .filter((p) => p.at !== undefined && p.at <= targetMs)
        .sort((a, b) => a.at! - b.at!)[0];
      if (!due) break;
      tank.advanceTo(due.at!);
      if (due.kind === 'pulse') {
        power[due.i] = false;
        pulseOffAt[due.i] = undefined;
        flashSaves++;
        syncTank();
      } else {
        ruleTimerAt[due.i] = undefined;
        runRules(`Rules#Timer=${due.i + 1}`);
      }
    }
    tank.advanceTo(targetMs);
  };
  const physicsAndRulesTo = async (targetMs: number): Promise<void> => {
    physicsTo(targetMs);
    await sendAll(ruleOutput.splice(0)).catch(() => undefined);
  };

  const ends = clientEnds(
    () => client,
    () => (client = undefined),
  );
  const sim: TasmotaSim = {
    get nowMs() {
      return tank.nowMs;
    },
    get connected() {
      return client?.connected ?? false;
    },
    get relayOn() {
      return power[relay - 1] ?? false;
    },
    get tank() {
      return tank;
    },
    get pulseTime() {
      return pulse[relay - 1] ?? 0;
    },
    get flashSaves() {
      return flashSaves;
    },
    get commands() {
      return commands;
    },
    get telemetry() {
      return sensorMessages;
    },
    async start() {
      client = await mqtt.connectAsync({
        ...brokerUrlOptions(options.url),
        clientId: `tasmota-sim-${topic}-${Math.random().toString(16).slice(2, 8)}`,
        reconnectPeriod: 500,
        will: { topic: `tele/${topic}/LWT`, payload: Buffer.from('Offline'), qos: 1, retain: true },
        ...options.clientOptions,
      });
      const online = async (): Promise<void> => {
        await publish(`tele/${topic}/LWT`, 'Online', true);
        await telemetry();
      };
      client.on('connect', () => void online().catch(() => undefined));
      client.on('message', (t, payload) => {
        if (silent) return;
        const command = t.slice(`cmnd/${topic}/`.length);
        void handle(command, payload.toString()).catch(() => undefined);
      });
      await client.subscribeAsync(`cmnd/${topic}/+`, { qos: 0 });
      await online();
    },
    async advance(ms) {
      const target = tank.nowMs + ms;
      while (telePeriodS > 0 && nextTeleMs <= target) {
        await physicsAndRulesTo(nextTeleMs);
        nextTeleMs += telePeriodS * 1000;
        await telemetry().catch(() => undefined);
      }
      await physicsAndRulesTo(target);
    },
    energyKwhByHour: () => tank.hourlyTruthKwh(),
    setSilent(value) {
      silent = value;
    },
    // Tasmota's topics have no common prefix: `topic` is a whole topic here.
    publishRaw: (topic, payload) => (client ? client.publishAsync(topic, payload, { qos: 1 }).then(() => undefined) : Promise.resolve()),
    run(clock, stepMs, signal) {
      return followClock(this, clock, stepMs, signal);
    },
    ...ends,
    async reboot() {
      await ends.crash();
      ruleTimerAt.fill(undefined);
      pulseOffAt.fill(undefined);
      power.forEach((_, i) => (power[i] = i + 1 === relay ? (options.initialOn ?? !blockOn) : false));
      syncTank();
      await sim.start();
    },
    ruleSet: (x) => ({ ...ruleSets[x - 1]! }),
    ruleTimerEndsAtMs: (x) => ruleTimerAt[x - 1],
  };
  return sim;
}
