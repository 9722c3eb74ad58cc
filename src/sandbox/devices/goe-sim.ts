/**
 * A simulated go-e Charger (API v2 over MQTT) with a car battery, behaving as go-e documents it
 * (github.com/goecharger/go-eCharger-API-v2, `mqtt-en.md`, `apikeys-en.md`):
 *
 * - one retained topic per key, `<prefix>/amp|frc|nrg|wh|eto|car|trx`, published only when its value
 *   changes (all of them again on every (re)connect); `trx` is the session's RFID card (null: no
 *   car, 0: a session without a card, else the card index + 1);
 * - `rbt` (ms since boot) published as time passes (every second on the real charger; here at most
 *   once per simulation step), the only key that shows an idle charger is alive;
 * - `mcc`: retained `true` after connecting and `false` as its MQTT Last Will;
 * - `<prefix>/amp/set` (6..maxCurrentA) and `<prefix>/frc/set` (0, 1, 2), each answered on
 *   `<key>/result` (non-retained); a set that changes nothing republishes nothing.
 *
 * - phase switching (with `phaseSwitch`, on a 3-phase charger): `<prefix>/psm/set` (phaseSwitchMode 0 auto, 1 force
 *   1-phase, 2 force 3-phase, a "Config" key) and `pnp` (numberOfPhases, "Status"), published on
 *   change. A change of phases waits until `minToggleWaitMs` (go-e's `mptwt`, "min phase toggle
 *   wait time") has passed since the last toggle; while the car charges the charger pauses for
 *   `switchPauseMs` across the toggle (go-e stops, switches and restarts by itself). go-e documents
 *   `mptwt` but no default value, so both default to 0 here; tests set them. In auto mode the
 *   simulator charges on all its phases (it has no PV logic). That `pnp` follows `psm` while the
 *   charger is paused is this simulator's assumption.
 *
 * Cars plug in and out on a schedule; a plugged car charges at amp × phases × voltage (√3 × voltage on an IT supply) while allowed
 * (frc ≠ 1) until its battery is full. Time moves only through `advance(ms)`; per-hour metered
 * energy is the ground truth for tests, and `setsOf(key)` counts the writes the charger received.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { followClock, publishOnline, type MqttSimulator } from './mqtt-simulator.js';
import { pluggedBattery, type EvBattery, type EvBatteryOptions } from './ev-battery.js';
import { wattsPerAmp, type Supply } from '../../core/fuse.js';
import { brokerUrlOptions } from '../../devices/mqtt/transport.js';

const hourMs = 3_600_000;

export interface GoeSimPlug {
  atMs: number;
  /** When the car leaves (never, if omitted). */
  untilMs?: number;
  /** A fresh battery for this plug-in, or a car followed over several plug-ins. */
  battery: EvBatteryOptions | EvBattery;
  /** go-e: the RFID card (index 0..9) presented with this car; without it the session has no card. */
  card?: number;
  /** OCPP: the id tag presented with this car (Authorize, then a StartTransaction of its own). */
  idTag?: string;
}

export interface GoeSimOptions {
  url: string;
  topicPrefix: string;
  startMs: number;
  phases?: 1 | 3;
  /** The supply it hangs on: on an IT 3×230 V supply a 3-phase charge draws √3·U·I, not 3·U·I (default TN). */
  supply?: Supply;
  voltageV?: number;
  amp?: number;
  frc?: 0 | 1 | 2;
  maxCurrentA?: number;
  /** A charger that switches phases (publishes `psm` and `pnp`, takes `psm/set`). Default false. */
  phaseSwitch?: boolean;
  /** Initial phaseSwitchMode (0 auto, 1 force 1-phase, 2 force 3-phase). Default 0. */
  psm?: 0 | 1 | 2;
  /** go-e `mptwt`: least time between two phase toggles, ms. Default 0. */
  minToggleWaitMs?: number;
  /** Pause across a toggle while charging, ms. Default 0. */
  switchPauseMs?: number;
  plugs?: GoeSimPlug[];
  clientOptions?: IClientOptions;
}

export interface GoeSim extends MqttSimulator {
  readonly amp: number;
  readonly frc: number;
  readonly car: number;
  readonly powerW: number;
  /** The phases it charges on now (`pnp`). */
  readonly phasesNow: 1 | 3;
  readonly psm: number;
  /** When the phases last toggled, ms (undefined: never). */
  readonly lastToggleMs: number | undefined;
  readonly totalWh: number;
  readonly battery: EvBattery | undefined;
  /** Publishes `payload` (raw) instead of the value of `key` until called again with null. */
  corrupt(key: string, payload: string | null): void;
  /** How many `<key>/set` messages the charger received. */
  setsOf(key: string): number;
  /** How many of them changed the key's value. */
  changesOf(key: string): number;
}

export function createGoeSim(options: GoeSimOptions): GoeSim {
  const prefix = options.topicPrefix;
  const phases = options.phases ?? 3;
  const voltage = options.voltageV ?? 230;
  const maxCurrentA = options.maxCurrentA ?? 32;
  let now = options.startMs;
  let amp = options.amp ?? 16;
  let frc: number = options.frc ?? 0;
  const switchable = options.phaseSwitch === true && phases === 3;
  let psm: number = options.psm ?? 0;
  const wishOf = (): 1 | 3 => (switchable && psm === 1 ? 1 : phases);
  let phasesNow: 1 | 3 = wishOf();
  let lastToggleMs: number | undefined;
  /** While a toggle pauses the charge: when it ends. */
  let switchingUntil: number | undefined;
  let totalWh = 0;
  let sessionWh = 0;
  let silent = false;
  const bootMs = options.startMs;
  let rbtAtMs = -Infinity;
  const published = new Map<string, string>();
  const sets = new Map<string, number>();
  const changes = new Map<string, number>();
  const corrupted = new Map<string, string>();
  const plugs = [...(options.plugs ?? [])].sort((a, b) => a.atMs - b.atMs);
  let active: { plug: GoeSimPlug; battery: EvBattery } | undefined;
  const hours = new Map<number, number>();
  let client: MqttClient | undefined;

  const allowed = (): boolean => frc !== 1 && amp >= 6;
  const charging = (): boolean => active !== undefined && !active.battery.full && allowed();
  const powerW = (): number => (charging() && switchingUntil === undefined ? amp * wattsPerAmp(options.supply ?? 'TN', phasesNow, voltage) : 0);

  /** Toggles the phases toward `psm` once the minimum toggle wait allows; returns when to look again. */
  const updatePhases = (): number | undefined => {
    if (switchingUntil !== undefined) {
      if (now < switchingUntil) return switchingUntil;
      switchingUntil = undefined;
      phasesNow = phasesNow === 1 ? 3 : 1;
      lastToggleMs = now;
    }
    if (wishOf() === phasesNow) return undefined;
    const allowedAt = lastToggleMs === undefined ? now : lastToggleMs + (options.minToggleWaitMs ?? 0);
    if (now < allowedAt) return allowedAt;
    const pauseMs = options.switchPauseMs ?? 0;
    if (charging() && pauseMs > 0) {
      switchingUntil = now + pauseMs;
      return switchingUntil;
    }
    phasesNow = wishOf();
    lastToggleMs = now;
    return undefined;
  };
  const carState = (): number => {
    if (!active) return 1;
    if (active.battery.full) return 4;
    return allowed() ? 2 : 3;
  };

  const updatePlug = (): void => {
    if (active?.plug.untilMs !== undefined && active.plug.untilMs <= now) active = undefined;
    if (!active) {
      const next = plugs.find((p) => p.atMs <= now && (p.untilMs === undefined || p.untilMs > now));
      if (next) {
        plugs.splice(plugs.indexOf(next), 1);
        active = { plug: next, battery: pluggedBattery(next.battery) };
        sessionWh = 0;
      }
    }
  };

  const integrate = (toMs: number): void => {
    updatePlug();
    while (now < toMs) {
      const events = [toMs, (Math.floor(now / hourMs) + 1) * hourMs];
      const phaseAt = updatePhases();
      if (phaseAt !== undefined && phaseAt > now) events.push(phaseAt);
      const nextPlug = plugs[0]?.atMs;
      if (nextPlug !== undefined && nextPlug > now) events.push(nextPlug);
      if (active?.plug.untilMs !== undefined) events.push(active.plug.untilMs);
      const p = powerW();
      if (active && p > 0) events.push(now + active.battery.msToFull(p));
      const stepEnd = Math.max(now + 1e-6, Math.min(...events));
      const kwh = (p * (stepEnd - now)) / 3_600_000_000;
      if (active && kwh > 0) active.battery.charge(Math.min(kwh, active.battery.acKwhToFull()));
      totalWh += kwh * 1000;
      sessionWh += kwh * 1000;
      const hour = Math.floor(now / hourMs) * hourMs;
      hours.set(hour, (hours.get(hour) ?? 0) + kwh);
      now = stepEnd;
      updatePlug();
    }
    now = toMs;
    updatePhases();
  };

  const nrg = (): number[] => {
    const p = powerW();
    const i = p > 0 ? amp : 0;
    const perPhase = p / phasesNow;
    const l = (n: number): number => (n <= phasesNow ? perPhase : 0);
    const c = (n: number): number => (n <= phasesNow ? i : 0);
    return [voltage, phases >= 2 ? voltage : 0, phases >= 3 ? voltage : 0, 0, c(1), c(2), c(3), l(1), l(2), l(3), 0, p, 1, 1, 1, 0];
  };

  /** Publishes a key when its payload changed (or on `all`, after a (re)connect). */
  const publishKey = async (key: string, value: unknown, all: boolean): Promise<void> => {
    const payload = corrupted.get(key) ?? JSON.stringify(value);
    if (silent || (!all && published.get(key) === payload) || !client?.connected) return;
    published.set(key, payload);
    await publishOnline(client, `${prefix}/${key}`, payload, { qos: 1, retain: true });
  };
  const publishChanges = async (all = false): Promise<void> => {
    await publishKey('amp', amp, all);
    await publishKey('frc', frc, all);
    if (switchable) {
      await publishKey('psm', psm, all);
      await publishKey('pnp', phasesNow, all);
    }
    await publishKey('car', carState(), all);
    await publishKey('nrg', nrg(), all);
    // wh: "energy in Wh since car connected", a double (apikeys-en.md); to the hundredth, as the charger shows it.
    await publishKey('wh', Math.round(sessionWh * 100) / 100, all);
    await publishKey('eto', Math.floor(totalWh), all);
    // trx: null without a transaction, 0 for one without a card, else the card index + 1.
    await publishKey('trx', active ? (active.plug.card ?? -1) + 1 : null, all);
    if (all || now - rbtAtMs >= 1000) {
      rbtAtMs = now;
      await publishKey('rbt', Math.floor(now - bootMs), true);
    }
  };

  const handleSet = async (key: string, raw: string): Promise<void> => {
    sets.set(key, (sets.get(key) ?? 0) + 1);
    const reply = (text: string): Promise<void> => publishOnline(client, `${prefix}/${key}/result`, text, { qos: 1 });
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      await reply(`invalid json: ${raw}`);
      return;
    }
    const current = (): number => (key === 'amp' ? amp : key === 'psm' ? psm : frc);
    const before = current();
    if (key === 'amp' && Number.isInteger(value) && (value as number) >= 6 && (value as number) <= maxCurrentA) amp = value as number;
    else if (key === 'frc' && (value === 0 || value === 1 || value === 2)) frc = value;
    else if (key === 'psm' && switchable && (value === 0 || value === 1 || value === 2)) psm = value;
    else {
      await reply(`value out of range: ${raw}`);
      return;
    }
    if (current() !== before) changes.set(key, (changes.get(key) ?? 0) + 1);
    updatePhases();
    await reply('success');
    await publishChanges();
  };

  return {
    get nowMs() {
      return now;
    },
    get connected() {
      return client?.connected ?? false;
    },
    get amp() {
      return amp;
    },
    get frc() {
      return frc;
    },
    get car() {
      return carState();
    },
    get powerW() {
      return powerW();
    },
    get phasesNow() {
      return phasesNow;
    },
    get psm() {
      return psm;
    },
    get lastToggleMs() {
      return lastToggleMs;
    },
    get totalWh() {
      return totalWh;
    },
    get battery() {
      return active?.battery;
    },
    async start() {
      client = await mqtt.connectAsync({
        ...brokerUrlOptions(options.url),
        clientId: `goe-sim-${Math.random().toString(16).slice(2, 8)}`,
        reconnectPeriod: 500,
        will: { topic: `${prefix}/mcc`, payload: Buffer.from('false'), qos: 1, retain: true },
        ...options.clientOptions,
      });
      const online = async (): Promise<void> => {
        await publishOnline(client, `${prefix}/mcc`, 'true', { qos: 1, retain: true });
        await publishChanges(true);
      };
      client.on('connect', () => void online().catch(() => undefined));
      client.on('message', (topic, payload) => {
        if (silent) return;
        const m = /\/([a-z]+)\/set$/.exec(topic);
        if (m?.[1]) void handleSet(m[1], payload.toString()).catch(() => undefined);
      });
      await client.subscribeAsync([`${prefix}/amp/set`, `${prefix}/frc/set`, `${prefix}/psm/set`], { qos: 1 });
      updatePlug();
      await online();
    },
    async advance(ms) {
      integrate(now + ms);
      await publishChanges().catch(() => undefined);
    },
    energyKwhByHour: () => new Map(hours),
    setSilent(value) {
      silent = value;
    },
    setsOf: (key) => sets.get(key) ?? 0,
    changesOf: (key) => changes.get(key) ?? 0,
    corrupt(key, payload) {
      if (payload === null) corrupted.delete(key);
      else corrupted.set(key, payload);
    },
    publishRaw: (key, payload) =>
      client ? client.publishAsync(`${prefix}/${key}`, payload, { qos: 1, retain: true }).then(() => undefined) : Promise.resolve(),
    run(clock, stepMs, signal) {
      return followClock(this, clock, stepMs, signal);
    },
    async close() {
      await client?.endAsync();
      client = undefined;
    },
  };
}
