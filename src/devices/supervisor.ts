/**
 * Fail-safe supervision of one device, whatever its transport (Modbus or MQTT): it only sees the
 * capability ports. Every read runs under a timeout; failures are counted; after
 * `downAfterFailures` consecutive failed reads or commands the device is "down": that is logged
 * once (warn, with the error code), the device is put in its declared safe state (heater:
 * allowed; charger: the configured safe current) best-effort, and commands other than the safe
 * state are held back until a read succeeds again (logged once, info).
 *
 * Commands are written on change only: a setting the device already has is not written again
 * (some devices keep settings in flash, and every write wears it). After a failed command or a
 * recovery the next command is written whatever it is, to resynchronise.
 *
 * A heater block is a lease where the device has one (`HeaterSwitch.deviceLease`): while blocked
 * and healthy, `block(leaseMs)` is re-issued every `leaseMs / 2`. A switch without a device lease
 * is written once per change; its block is reported as not lease-protected. `stop()` ends the
 * renewals and releases the block (allow).
 *
 * A block held for a cap (`applyHeater(true, holdUntilMs)`) is written with a lease to the cap's
 * end (at most the device's `maxLeaseMs`), so that a daemon killed or hung in the window leaves
 * the device blocked until the window ends and no longer; it is renewed once, half a lease before
 * that end. While such a hold runs, neither `stop()` nor the safe state of a device that stopped
 * answering releases it: the device's own timer ends it (docs/caps.md).
 *
 * A safe state never starts a load: a charger's safe state is a limit, at most the safe current
 * and at most what it was last set to, applied with `limitCurrentA` where the charger has it.
 */
import { WattshiftError, toWattshiftError, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type {
  ChargeCurrentLimit,
  Clock,
  EnergyMeter,
  EvState,
  EvStateReader,
  HeaterSwitch,
  PhaseMeter,
  PhaseReading,
  PhaseSwitch,
  PowerMeter,
  SgReadyInput,
  Thermometer,
  ThermostatSetpoint,
} from '../ports.js';
import type { SgState } from '../core/heat-pump.js';

/** The capabilities one device offers; each optional. */
export interface DeviceCapabilities {
  heaterSwitch?: HeaterSwitch;
  chargeCurrentLimit?: ChargeCurrentLimit;
  energyMeter?: EnergyMeter;
  powerMeter?: PowerMeter;
  thermometer?: Thermometer;
  evStateReader?: EvStateReader;
  /** Per-phase currents and voltages (a main meter through the HAN port). */
  phaseMeter?: PhaseMeter;
  /** A heat pump's SG Ready input (safe state: normal operation, "0:0"). */
  sgReady?: SgReadyInput;
  /** A heated zone's thermostat (safe state: the zone's comfort target, `SupervisorOptions.safeSetpointC`). */
  thermostatSetpoint?: ThermostatSetpoint;
  /** 1-phase/3-phase switching of a charger. */
  phaseSwitch?: PhaseSwitch;
  /**
   * Longest cap window a charger holds by itself once given, ms, asked when a cap comes (an OCPP
   * charging profile with `validTo`: none once the charger refused one; a charger that stops on its
   * own when wattshift goes silent: any). Absent: it holds a cap only while wattshift runs (docs/caps.md).
   */
  chargerHoldsCapMs?: () => number;
}

export type DeviceKind = 'hotWaterTank' | 'evCharger' | 'meter' | 'heatPump' | 'zone' | 'solar';
export type ReadCapability = 'energyMeter' | 'powerMeter' | 'thermometer' | 'evStateReader' | 'phaseMeter';
export type CommandCapability = 'heaterSwitch' | 'chargeCurrentLimit' | 'sgReady' | 'phaseSwitch' | 'thermostatSetpoint';

export interface DeviceReading {
  atMs: number;
  energyKwh?: number;
  /** When a pushed counter value arrived (see `EnergyMeter.readStampedEnergyKwh`). */
  energyAtMs?: number;
  powerW?: number;
  temperatureC?: number;
  ev?: EvState;
  /** Per-phase currents of a HAN meter. */
  phases?: PhaseReading;
  errors: { capability: ReadCapability | CommandCapability; code: ErrorCode }[];
}

export interface DeviceHealth {
  state: 'up' | 'down';
  /** Since when in this state (clock ms). */
  sinceMs: number;
  consecutiveFailures: number;
  /** Set while the device has not answered once since the daemon started: its state is assumed, not known. */
  unheard?: true;
  lastError?: { code: ErrorCode; message: string };
  /** Whether the heater is currently held blocked. */
  blocked: boolean;
  /** A block that the device does not end by itself (no device-side lease): it outlasts an outage. */
  blockWithoutLease?: boolean;
  /** The device holds the block by itself until then (clock ms): a cap's window, written into its timer. */
  capHeldUntilMs?: number;
  /** The last current applied to the charger, A. */
  currentA?: number;
  /** The heat pump's SG Ready state last written. */
  sgState?: SgState;
  /** The thermostat setpoint last written, °C. */
  setpointC?: number;
}

export interface SupervisorOptions {
  id: string;
  kind: DeviceKind;
  capabilities: DeviceCapabilities;
  /** Charger current applied when wattshift loses control or stops (0 = pause). Default 0. */
  safeCurrentA?: number;
  /** Lease length of a heater block. */
  leaseMs: number;
  /** Deadline of each read and command. */
  readTimeoutMs: number;
  /** Consecutive failures before the device counts as down. Default 2. */
  downAfterFailures?: number;
  /** A thermostat's setpoint when wattshift loses control or stops, °C (the zone's comfort target now). */
  safeSetpointC?: () => number;
}

export interface SupervisedDevice {
  /** Reads every readable capability concurrently; never throws for device errors. */
  read(signal: AbortSignal): Promise<DeviceReading>;
  /**
   * Blocks (with a renewed lease) or allows the heater. Held at "allowed" while down, unless a
   * cap's block is held on the device. `holdUntilMs`: the block is a cap's, to be held on the
   * device by itself until then.
   */
  applyHeater(blocked: boolean, holdUntilMs?: number): Promise<void>;
  /** Sets a heat pump's SG Ready state (a lock or boost renewed as a lease). Held at "normal" while down. */
  applySgReady(state: SgState): Promise<void>;
  /**
   * Sets the charger current. Held at the safe current while down. `capUntilMs`: the current is a
   * cap's, put into a charger that can hold it by itself until then (`holdCapA`).
   */
  applyCurrent(currentA: number, capUntilMs?: number): Promise<void>;
  /** Sets the charger's phase count, on change only; nothing while down. Absent where the device cannot. */
  applyPhases?(phases: 1 | 3): Promise<void>;
  /** Sets a thermostat's setpoint, on change only; the safe setpoint while down. Absent where the device has no thermostat. */
  applySetpoint?(setpointC: number): Promise<void>;
  health(): DeviceHealth;
  /** Ends lease renewals and releases the device: heater allowed, charger at the safe current. */
  stop(): Promise<void>;
}

/** Why a device call's timer is cancelled: the call ended before its deadline. */
const callEnded = Object.freeze({ reason: 'device call ended' });

const readers = {
  // A polled counter is stamped when its answer arrives: the read may wait behind others on its
  // bus, and a stamp taken before queueing would move energy across an hour boundary.
  energyMeter: (c: DeviceCapabilities, s: AbortSignal, nowMs: () => number) =>
    c.energyMeter?.readStampedEnergyKwh?.(s) ?? c.energyMeter?.readEnergyKwh(s).then((kwh) => ({ kwh, atMs: nowMs() })),
  powerMeter: (c: DeviceCapabilities, s: AbortSignal) => c.powerMeter?.readPowerW(s),
  thermometer: (c: DeviceCapabilities, s: AbortSignal) => c.thermometer?.readTemperatureC(s),
  evStateReader: (c: DeviceCapabilities, s: AbortSignal) => c.evStateReader?.readEvState(s),
  phaseMeter: (c: DeviceCapabilities, s: AbortSignal) => c.phaseMeter?.readPhases(s),
} as const;

export function superviseDevice(options: SupervisorOptions, deps: { clock: Clock; logger: Logger }): SupervisedDevice {
  const { clock } = deps;
  const { capabilities: caps, id } = options;
  const log = deps.logger.child({ component: 'supervisor', device: id, kind: options.kind });
  const downAfter = Math.max(1, options.downAfterFailures ?? 2);
  const safeCurrentA = options.safeCurrentA ?? 0;
  const stopController = new AbortController();
  let state: 'up' | 'down' = 'up';
  let sinceMs = clock.nowMs();
  let failures = 0;
  let heard = false;
  let lastError: WattshiftError | undefined;
  let blocked = false;
  /** The heater state last confirmed written; undefined when unknown (start, failed write). */
  let heaterWritten: 'blocked' | 'allowed' | undefined;
  /** The SG Ready state last confirmed written; undefined when unknown. */
  let sgWritten: SgState | undefined;
  let setpointWritten: number | undefined;
  let currentA: number | undefined;
  /** The phase count last confirmed written; undefined when unknown (start, failure, recovery). */
  let phasesWritten: 1 | 3 | undefined;
  /** The next command is written even if unchanged (after a failure or a recovery). */
  let resync = true;
  let renewal: AbortController | undefined;
  /** When the lease written last ends on the device (clock ms). */
  let leaseEndMs = 0;
  /** The cap window the heater's block is held for, if any (clock ms). */
  let holdUntilMs: number | undefined;
  let stopped = false;
  const maxLeaseMs = caps.heaterSwitch?.maxLeaseMs ?? options.leaseMs;

  /** The lease of a heater block issued at `atMs`: to the end of a held cap where the device can time it. */
  const heaterLeaseMs = (atMs: number): number =>
    holdUntilMs === undefined ? options.leaseMs : Math.max(options.leaseMs, Math.min(maxLeaseMs, holdUntilMs - atMs));
  /** A cap's block that the device holds by itself now: not to be released by wattshift before its end. */
  const capHeldOnDevice = (): boolean =>
    holdUntilMs !== undefined &&
    caps.heaterSwitch?.deviceLease === true &&
    heaterWritten === 'blocked' &&
    leaseEndMs >= holdUntilMs &&
    clock.nowMs() < holdUntilMs;

  /** The cap last put into a charger that holds it by itself (its current, and its end in clock ms). */
  let chargerCap: { maxCurrentA: number; untilMs: number } | undefined;

  /** Runs one device call under the read timeout, also cancelled by stop(). */
  const timed = async <T>(what: string, signal: AbortSignal | undefined, work: (s: AbortSignal) => Promise<T>): Promise<T> => {
    const inner = new AbortController();
    const timer = new AbortController();
    const abort = (reason: unknown): void => inner.abort(reason);
    const onOuter = (): void => abort(signal?.reason);
    signal?.addEventListener('abort', onOuter, { once: true });
    // The timeout's error is made only when it fires: a device call runs every tick, and an error
    // captures a stack trace.
    clock.sleep(options.readTimeoutMs, timer.signal).then(
      () => abort(new WattshiftError('DEVICE_TIMEOUT', `${id}: ${what} did not answer within ${options.readTimeoutMs} ms`)),
      () => undefined,
    );
    try {
      // Race so that a device ignoring its signal cannot hold us past the deadline.
      return await Promise.race([
        work(inner.signal),
        new Promise<never>((_r, reject) => {
          if (inner.signal.aborted) reject(inner.signal.reason);
          inner.signal.addEventListener('abort', () => reject(inner.signal.reason), { once: true });
        }),
      ]);
    } finally {
      // A reason of our own: without one, abort() builds a DOMException (a stack trace) every call.
      timer.abort(callEnded);
      signal?.removeEventListener('abort', onOuter);
    }
  };

  /** The charger's safe limit: never above the safe current, never above what it was set to. */
  const safeLimitA = (wantA = Infinity): number => Math.min(wantA, safeCurrentA, currentA ?? safeCurrentA);
  const limitCurrent = (a: number, s: AbortSignal): Promise<void> => {
    const ch = caps.chargeCurrentLimit!;
    return ch.limitCurrentA ? ch.limitCurrentA(a, s) : ch.setCurrentA(a, s);
  };

  const enterSafeState = async (): Promise<void> => {
    // A cap's block the device holds by itself stays: the cap outranks the safe state, and the
    // device's timer ends it with the window.
    const keepCap = capHeldOnDevice();
    stopRenewal();
    if (!keepCap) blocked = false;
    try {
      if (caps.heaterSwitch && !keepCap) {
        heaterWritten = undefined;
        await timed('allow', undefined, (s) => caps.heaterSwitch!.allow(s));
        heaterWritten = 'allowed';
      }
      if (caps.sgReady) {
        sgWritten = undefined;
        await timed('normal operation', undefined, (s) => caps.sgReady!.setState('normal', options.leaseMs, s));
        sgWritten = 'normal';
      }
      if (caps.chargeCurrentLimit) {
        const limit = safeLimitA();
        await timed('limit to the safe current', undefined, (s) => limitCurrent(limit, s));
        currentA = limit;
      }
      const safeC = options.safeSetpointC?.();
      if (caps.thermostatSetpoint && safeC !== undefined) {
        setpointWritten = undefined;
        await timed('comfort setpoint', undefined, (s) => caps.thermostatSetpoint!.writeSetpointC(safeC, s));
        setpointWritten = safeC;
      }
    } catch (err) {
      const e = toWattshiftError(err, 'DEVICE_UNREACHABLE', 'safe state');
      log.debug({ code: e.code, err: e.message }, 'safe state not confirmed (the device falls back on its own where it can)');
    }
  };

  const failed = (err: WattshiftError): void => {
    failures++;
    lastError = err;
    if (state === 'up' && failures >= downAfter && !stopped) {
      state = 'down';
      sinceMs = clock.nowMs();
      log.warn({ code: err.code, err: err.message, failures }, 'device down; putting it in its safe state');
      void enterSafeState();
    }
  };

  const succeeded = (): void => {
    failures = 0;
    heard = true;
    if (state === 'down') {
      state = 'up';
      resync = true;
      phasesWritten = undefined;
      sinceMs = clock.nowMs();
      log.info({ downSinceCode: lastError?.code }, 'device recovered');
    }
  };

  function stopRenewal(): void {
    renewal?.abort();
    renewal = undefined;
  }

  const renewLoop = async (signal: AbortSignal): Promise<void> => {
    const halfMs = Math.max(1, Math.floor(options.leaseMs / 2));
    // After a failed renewal the lease written last still holds for half a lease: try again well
    // within it, so one lost write does not let the device's timer release it (a relay blip, and a
    // heat pump counting a second lock).
    const retryMs = Math.max(1, Math.floor(options.leaseMs / 20));
    // Half a lease before the written one ends (a cap's long lease: once, near the cap's end),
    // anchored to when it was issued, so command latency does not stretch the lease.
    let nextMs = leaseEndMs - halfMs;
    for (;;) {
      try {
        await clock.sleep(Math.max(0, nextMs - clock.nowMs()), signal);
      } catch {
        return;
      }
      const sg = sgWritten;
      if (signal.aborted || state !== 'up' || (!blocked && (sg === undefined || sg === 'normal'))) return;
      const issuedAtMs = clock.nowMs();
      const sgLease = caps.sgReady && sg !== undefined;
      const leaseMs = sgLease ? options.leaseMs : heaterLeaseMs(issuedAtMs);
      try {
        await timed('renew block', signal, (s) => (sgLease ? caps.sgReady!.setState(sg, leaseMs, s) : caps.heaterSwitch!.block(leaseMs, s)));
        leaseEndMs = issuedAtMs + leaseMs;
        nextMs = leaseEndMs - halfMs;
      } catch (err) {
        if (signal.aborted) return;
        const e = toWattshiftError(err, 'DEVICE_UNREACHABLE', `${id}: renewing block`);
        heaterWritten = undefined;
        log.debug({ code: e.code }, 'lease renewal failed');
        failed(e);
        nextMs = clock.nowMs() + retryMs;
      }
    }
  };

  const command = async (what: string, work: (s: AbortSignal) => Promise<void>): Promise<void> => {
    try {
      await timed(what, stopController.signal, work);
      resync = false;
    } catch (err) {
      const e = toWattshiftError(err, 'DEVICE_UNREACHABLE', `${id}: ${what}`);
      resync = true;
      failed(e);
      throw e;
    }
  };

  /** A phase switch is a persisted setting on some chargers: written on change only, never while down. */
  const applyPhases = async (sw: PhaseSwitch, n: 1 | 3): Promise<void> => {
    if (stopped || state === 'down' || phasesWritten === n) return;
    phasesWritten = undefined;
    await command(`set ${n} phases`, (s) => sw.setPhases(n, s));
    phasesWritten = n;
  };

  return {
    async read(signal) {
      const reading: DeviceReading = { atMs: clock.nowMs(), errors: [] };
      const names = (Object.keys(readers) as ReadCapability[]).filter((n) => caps[n] !== undefined);
      // The control loop passes one signal to every device's read of a tick: one listener on it
      // per read, however many capabilities the read waits on (each listens to the read's own).
      const thisRead = new AbortController();
      const onAbort = (): void => thisRead.abort(signal.reason);
      if (signal.aborted) thisRead.abort(signal.reason);
      else signal.addEventListener('abort', onAbort, { once: true });
      const results = await Promise.allSettled(
        names.map((n) => timed(`read ${n}`, thisRead.signal, (s) => readers[n](caps, s, () => clock.nowMs()) as Promise<unknown>)),
      ).finally(() => signal.removeEventListener('abort', onAbort));
      let firstError: WattshiftError | undefined;
      results.forEach((r, i) => {
        const name = names[i]!;
        if (r.status === 'rejected') {
          const e = toWattshiftError(r.reason, 'DEVICE_UNREACHABLE', `${id}: read ${name}`);
          reading.errors.push({ capability: name, code: e.code });
          // A value the device has not sent yet on its own schedule (a meter's hourly list after a
          // start) is missing from the reading, but the device is not failing.
          if (e.details?.awaiting !== true) firstError ??= e;
          return;
        }
        if (name === 'energyMeter') {
          const energy = r.value as { kwh: number; atMs: number };
          reading.energyKwh = energy.kwh;
          reading.energyAtMs = energy.atMs;
        } else if (name === 'powerMeter') reading.powerW = r.value as number;
        else if (name === 'thermometer') reading.temperatureC = r.value as number;
        else if (name === 'phaseMeter') reading.phases = r.value as PhaseReading;
        else reading.ev = r.value as EvState;
      });
      if (signal.aborted) return reading;
      if (firstError) failed(firstError);
      else succeeded();
      return reading;
    },

    async applyHeater(block, holdUntil) {
      const sw = caps.heaterSwitch;
      if (!sw) throw new WattshiftError('INTERNAL', `${id} has no heater switch`);
      if (stopped) return;
      if (state === 'down' && block && capHeldOnDevice()) return;
      if (!block || state === 'down') {
        if (state === 'down' && block) log.debug('block held back: device is down');
        stopRenewal();
        blocked = false;
        holdUntilMs = undefined;
        if (heaterWritten === 'allowed' && !resync) return;
        heaterWritten = undefined;
        await command('allow', (s) => sw.allow(s));
        heaterWritten = 'allowed';
        return;
      }
      const holdChanged = sw.deviceLease && holdUntil !== holdUntilMs;
      holdUntilMs = holdUntil;
      // Still blocked: a device lease is renewed by its own loop; a plain relay needs nothing. A
      // new cap window is written at once, so the device's timer covers it from its start.
      if (heaterWritten === 'blocked' && !resync && !holdChanged) return;
      const issuedAtMs = clock.nowMs();
      const leaseMs = heaterLeaseMs(issuedAtMs);
      stopRenewal();
      heaterWritten = undefined;
      await command('block', (s) => sw.block(leaseMs, s));
      heaterWritten = 'blocked';
      leaseEndMs = issuedAtMs + leaseMs;
      blocked = true;
      if (holdUntil !== undefined && sw.deviceLease)
        log.info({ holdUntil: new Date(Math.min(leaseEndMs, holdUntil)).toISOString() }, "cap block written to the device's own timer");
      if (sw.deviceLease) {
        renewal = new AbortController();
        void renewLoop(renewal.signal);
      }
    },

    async applySgReady(want) {
      const sg = caps.sgReady;
      if (!sg) throw new WattshiftError('INTERNAL', `${id} has no SG Ready input`);
      if (stopped) return;
      const next: SgState = state === 'down' ? 'normal' : want;
      if (next === sgWritten && !resync) return;
      const issuedAtMs = clock.nowMs();
      stopRenewal();
      sgWritten = undefined;
      await command(`SG Ready ${next}`, (s) => sg.setState(next, options.leaseMs, s));
      sgWritten = next;
      blocked = next === 'block';
      leaseEndMs = issuedAtMs + options.leaseMs;
      if (next !== 'normal' && sg.deviceLease) {
        renewal = new AbortController();
        void renewLoop(renewal.signal);
      }
    },

    async applyCurrent(a, capUntilMs) {
      const ch = caps.chargeCurrentLimit;
      if (!ch) throw new WattshiftError('INTERNAL', `${id} has no charge current limit`);
      if (stopped) return;
      if (!Number.isFinite(a) || a < 0) throw new WattshiftError('INTERNAL', `${id}: current ${a} A is not valid`);
      if (state === 'down') {
        const limit = safeLimitA(a);
        if (limit === currentA && !resync) return;
        await command('limit to the safe current', (s) => limitCurrent(limit, s));
        currentA = limit;
        return;
      }
      if (a !== currentA || resync) {
        await command('set current', (s) => ch.setCurrentA(a, s));
        currentA = a;
      }
      // A cap's current goes into the charger itself, on change; its own clock ends it at the window's end, and stop() leaves it.
      const cap = capUntilMs !== undefined && capUntilMs > clock.nowMs() ? { maxCurrentA: a, untilMs: capUntilMs } : undefined;
      if (ch.holdCapA && (cap?.maxCurrentA !== chargerCap?.maxCurrentA || cap?.untilMs !== chargerCap?.untilMs)) {
        await command(cap ? 'hold the cap' : 'lift the cap', (s) => ch.holdCapA!(cap, s));
        chargerCap = cap;
      }
    },

    ...(caps.phaseSwitch ? { applyPhases: (n: 1 | 3) => applyPhases(caps.phaseSwitch!, n) } : {}),

    ...(caps.thermostatSetpoint
      ? {
          async applySetpoint(want: number) {
            if (stopped) return;
            const next = state === 'down' && options.safeSetpointC ? options.safeSetpointC() : want;
            if (next === setpointWritten && !resync) return;
            setpointWritten = undefined;
            await command(`setpoint ${next} °C`, (s) => caps.thermostatSetpoint!.writeSetpointC(next, s));
            setpointWritten = next;
          },
        }
      : {}),

    health() {
      const h: DeviceHealth = { state, sinceMs, consecutiveFailures: failures, blocked };
      if (!heard) h.unheard = true;
      if (blocked && caps.heaterSwitch && !caps.heaterSwitch.deviceLease) h.blockWithoutLease = true;
      if (blocked && caps.sgReady && !caps.sgReady.deviceLease) h.blockWithoutLease = true;
      if (capHeldOnDevice()) h.capHeldUntilMs = Math.min(holdUntilMs!, leaseEndMs);
      if (sgWritten !== undefined) h.sgState = sgWritten;
      if (setpointWritten !== undefined) h.setpointC = setpointWritten;
      if (lastError) h.lastError = { code: lastError.code, message: lastError.message };
      if (currentA !== undefined) h.currentA = currentA;
      return h;
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      stopRenewal();
      stopController.abort(new WattshiftError('INTERNAL', `${id}: supervisor stopped`));
      blocked = false;
      const release = async (what: string, work: (s: AbortSignal) => Promise<void>): Promise<void> => {
        try {
          await timed(what, undefined, work);
        } catch (err) {
          const e = toWattshiftError(err, 'DEVICE_UNREACHABLE', `${id}: ${what} on stop`);
          log.warn({ code: e.code, err: e.message }, 'could not release the device on stop (a lease still expires on the device where supported)');
        }
      };
      // A cap's block the device holds by itself is left to its timer: the cap outlives the daemon.
      if (caps.heaterSwitch && capHeldOnDevice())
        log.info({ holdUntil: new Date(Math.min(holdUntilMs!, leaseEndMs)).toISOString() }, "cap block left on the device's timer at stop");
      else if (caps.heaterSwitch) await release('allow', (s) => caps.heaterSwitch!.allow(s));
      if (caps.sgReady) await release('normal operation', (s) => caps.sgReady!.setState('normal', options.leaseMs, s));
      // A thermostat keeps the last setpoint: it is left at the comfort target, for the thermostat to hold alone.
      const safeC = options.safeSetpointC?.();
      if (caps.thermostatSetpoint && safeC !== undefined) await release('comfort setpoint', (s) => caps.thermostatSetpoint!.writeSetpointC(safeC, s));
      const charger = caps.chargeCurrentLimit;
      // A charger that wattshift forces on is handed back to its own logic, not forced on once more.
      if (charger)
        await release('safe current', (s) =>
          charger.releaseCurrentA ? charger.releaseCurrentA(safeCurrentA, s) : charger.setCurrentA(safeCurrentA, s),
        );
    },
  };
}
