/**
 * One connector of an OCPP 1.6J charge point as a charger device (the ports of `src/ports.ts`).
 *
 * - The charging limit is a charging profile in amperes (OCPP 1.6 §3.13 Smart Charging, §5.16
 *   SetChargingProfile, §7.8 ChargingProfile). On every connection the connector gets a
 *   `TxDefaultProfile` (stack level 0) at the safe current: the one the charger falls back to by
 *   itself. The limit wattshift sets is a `TxProfile` (stack level 1) for the running transaction
 *   and, for a session the charger starts on its own (a card, a free-charging car), a
 *   `TxDefaultProfile` at stack level 1, which outranks the safe one (§3.13.2): so a car that
 *   plugs in starts at what the plan and the main fuse allow now, not at the safe current. Both are
 *   valid for a lease (`validTo`) that is renewed every half lease while the charger is connected:
 *   a charger that loses wattshift returns to the safe current on its own when the lease ends
 *   (§3.13.3: an expired profile no longer applies).
 * - A cap with a window (`holdCapA`) goes into the charge point itself as a `ChargePointMaxProfile`
 *   on connector 0 in absolute time (validFrom now, validTo the window's end, at most 24 h; §3.13.1,
 *   §7.8), which caps every profile below it: a charger that loses wattshift holds the cap to the
 *   window's end rather than returning to the safe current when the lease ends, and drops it by
 *   itself then. It is sent again on every connection; a charger that refuses it
 *   (OCPP_CAP_REFUSED) holds the cap only while wattshift runs, and says so (`chargerHoldsCapMs` 0).
 * - Below the 6 A minimum (IEC 61851) the limit is 0 A, which suspends charging (SuspendedEVSE)
 *   and keeps the session. A charger that refuses the 0 A profile, or any lower limit, is stopped
 *   (RemoteStopTransaction, §5.12) instead (OCPP_LIMIT_REFUSED), since a pause or a fuse limit must
 *   hold; one that refuses the stop too is OCPP_CHARGER_UNCONTROLLED.
 * - A limit of 6 A or more with a car plugged in and no transaction starts one
 *   (RemoteStartTransaction with the TxProfile, §5.11); `limitCurrentA` (the safe state) never does.
 *   After a session was stopped because the charger refused a limit, no session is started again
 *   for a while (5 minutes, doubling up to 2 hours until a limit is accepted), so a charger that
 *   refuses every profile is not started and stopped on every tick.
 * - Phase switching (`setPhases`, for a charger configured with `model.phaseSwitching`): the
 *   session's TxProfile carries the phase count as its period's `numberPhases` (§7.13: "the
 *   number of phases that can be used for charging"; 3 when absent), sent again at once. OCPP 1.6
 *   has no reading of the phases in use, so the charger's phase count is not reported back.
 * - Energy is the connector's Energy.Active.Import.Register from MeterValues (and the meter values
 *   of Start/StopTransaction), power is Power.Active.Import (0 when the status says no energy
 *   flows), the car state is the connector's StatusNotification (§4.9, §7.7). The car is named by
 *   the idTag of its session's StartTransaction (§4.8), else of an Authorize (§4.1) heard while the
 *   connector was not unplugged since; wattshift's own `idTag` (its remote starts) names no car.
 *
 * Readings fail with DEVICE_UNREACHABLE while the charge point is not connected and DEVICE_STALE
 * when it has been silent longer than `staleAfterS` (heartbeats keep it alive).
 */
import { codeOf, WattshiftError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ChargeCurrentLimit, Clock, EvState, PhaseSwitch } from '../../ports.js';
import type { DeviceCapabilities } from '../supervisor.js';
import { LatestValues } from '../mqtt/values.js';
import { pushedEnergyMeter } from '../mqtt/util.js';
import { metered } from '../../core/metered-bounds.js';
import type { ChargePointLink, LinkEvent } from './link.js';

/** How long remote starts are held after a session stopped for a refused limit: doubling between these. */
const minStartHoldMs = 5 * 60_000;
const maxStartHoldMs = 2 * 3_600_000;
import type { ChargePointStatus } from './messages.js';

export const ocppMinCurrentA = 6;
const defaultProfileId = 1000;
const txProfileId = 1001;
const leasedDefaultProfileId = 1002;
const capProfileId = 1003;
/** Longest cap window wattshift puts into a charge point (a ChargePointMaxProfile with validTo), ms. */
export const ocppCapHoldMaxMs = 24 * 3_600_000;

/**
 * Keeps the running transaction across restarts of wattshift: its id, the car's tag and the
 * energy register at its start (meterStart). OCPP 1.6 has no request that tells a central system
 * the idTag or the meterStart of a transaction already running; without them a restart forgets
 * which car is plugged in and what the session has charged.
 */
export interface SessionTagMemory {
  get(): KeptSession | undefined;
  set(session: KeptSession | undefined): void;
}

export interface KeptSession {
  transactionId: number;
  /** The car's tag (absent: a session wattshift started, or one no card named). */
  idTag?: string;
  /** The energy register at the start, Wh. */
  meterStartWh?: number;
}

export interface OcppChargerOptions {
  id: string;
  connectorId: number;
  idTag: string;
  maxCurrentA: number;
  safeCurrentA: number;
  leaseS: number;
  staleAfterS: number;
  clock: Clock;
  logger: Logger;
  sessionTags?: SessionTagMemory;
}

export interface OcppCharger extends DeviceCapabilities {
  chargeCurrentLimit: Required<ChargeCurrentLimit>;
  phaseSwitch: PhaseSwitch;
  close(): void;
}

/** A connector state where no energy flows to the car (§7.7). */
const idle: ReadonlySet<ChargePointStatus> = new Set([
  'Available',
  'Preparing',
  'SuspendedEVSE',
  'SuspendedEV',
  'Finishing',
  'Reserved',
  'Unavailable',
  'Faulted',
]);
const unplugged: ReadonlySet<ChargePointStatus> = new Set(['Available', 'Reserved', 'Unavailable']);

export function createOcppCharger(link: ChargePointLink, options: OcppChargerOptions): OcppCharger {
  const { clock, connectorId, id: device } = options;
  const log = options.logger.child({ component: 'ocpp-charger', device });
  const leaseMs = options.leaseS * 1000;
  const values = new LatestValues({ device, clock, staleAfterMs: options.staleAfterS * 1000, isConnected: () => true, deviceLiveness: true });
  const unreachable = new WattshiftError('DEVICE_UNREACHABLE', `${device}: charge point ${link.id} not connected`, { details: { device } });
  if (!link.connected) values.setOffline(unreachable);
  /** The limit wattshift last set for the running session, A (undefined: the default governs). */
  let limitA: number | undefined;
  /** The phases wattshift set for the session's limit (undefined: never set, the profile says none). */
  let phases: 1 | 3 | undefined;
  const closed = new AbortController();

  const amps = (a: number): number => {
    if (!Number.isFinite(a) || a < 0) throw new WattshiftError('MQTT_COMMAND_INVALID', `${device}: current ${a} A is not valid`);
    return a < ocppMinCurrentA ? 0 : Math.min(options.maxCurrentA, Math.floor(a));
  };

  /** `safe`: the charger's own fallback; `leased`: wattshift's limit for a session the charger starts; `session`: the running one's. */
  const profile = (kind: 'safe' | 'leased' | 'session', a: number, transactionId?: number): Record<string, unknown> => ({
    chargingProfileId: kind === 'session' ? txProfileId : kind === 'leased' ? leasedDefaultProfileId : defaultProfileId,
    ...(transactionId !== undefined ? { transactionId } : {}),
    stackLevel: kind === 'safe' ? 0 : 1,
    chargingProfilePurpose: kind === 'session' ? 'TxProfile' : 'TxDefaultProfile',
    chargingProfileKind: 'Relative',
    ...(kind !== 'safe' ? { validTo: new Date(clock.nowMs() + leaseMs).toISOString() } : {}),
    chargingSchedule: {
      chargingRateUnit: 'A',
      chargingSchedulePeriod: [{ startPeriod: 0, limit: a, ...(kind !== 'safe' && phases !== undefined ? { numberPhases: phases } : {}) }],
    },
  });

  /** The cap wattshift put into the charge point itself, A, and its end (clock ms); re-sent on every connection. */
  let heldCap: { a: number; untilMs: number } | undefined;
  /** Whether the charger refused the last cap profile. */
  let capRefused = false;
  /**
   * The cap as the whole charge point's limit for the cap's window (§3.13.1 ChargePointMaxProfile,
   * on connector 0, absolute time): it caps every profile below it and ends by itself at `validTo`,
   * so a charger that loses wattshift holds the cap to its end instead of falling back to the safe current.
   */
  const capProfile = (cap: { a: number; untilMs: number }): Record<string, unknown> => {
    const fromMs = clock.nowMs();
    return {
      chargingProfileId: capProfileId,
      stackLevel: 1,
      chargingProfilePurpose: 'ChargePointMaxProfile',
      chargingProfileKind: 'Absolute',
      validFrom: new Date(fromMs).toISOString(),
      validTo: new Date(cap.untilMs).toISOString(),
      chargingSchedule: {
        duration: Math.ceil((cap.untilMs - fromMs) / 1000),
        startSchedule: new Date(fromMs).toISOString(),
        chargingRateUnit: 'A',
        chargingSchedulePeriod: [{ startPeriod: 0, limit: cap.a }],
      },
    };
  };
  const sendCap = async (signal: AbortSignal): Promise<void> => {
    const cap = heldCap;
    if (cap === undefined) return;
    if (cap.untilMs <= clock.nowMs()) {
      heldCap = undefined;
      return;
    }
    await link.request('SetChargingProfile', { connectorId: 0, csChargingProfiles: capProfile(cap) }, signal);
  };

  const setDefault = (kind: 'safe' | 'leased', a: number, signal: AbortSignal): Promise<void> =>
    link.request('SetChargingProfile', { connectorId, csChargingProfiles: profile(kind, a) }, signal);

  const plugged = (): boolean => {
    const s = values.peek('status') as ChargePointStatus | undefined;
    return s !== undefined && !unplugged.has(s) && s !== 'Faulted';
  };

  /** The car's id tags of the connector's session: from StartTransaction, else from an Authorize; cleared when unplugged. */
  let tags: { started?: string; authorized?: string } = {};
  /** The energy register at the start of the connector's session, Wh (undefined: not known, e.g. relearnt after a restart). */
  let sessionStartWh: number | undefined;
  /** The limit the charger last accepted for the running session, A (undefined: not known). */
  let acceptedA: number | undefined;
  /** Whether the charger refused the leased default (logged once per run of refusals). */
  let defaultRefused = false;
  /**
   * The transaction for which the last attempt to bring the current down failed both ways. The
   * first time it may have just ended, its StopTransaction still on the way; from the second,
   * `uncontrolled` (logged once per run of failures).
   */
  let refusedBoth: { tx: number; uncontrolled: boolean } | undefined;
  /** The running transaction and when wattshift learnt of it (clock ms). */
  let txSeen: { id: number; atMs: number } | undefined;
  /** No remote start before this (clock ms), after a session stopped for a refused limit; and the current hold. */
  let noStartBeforeMs = 0;
  let startHoldMs = 0;
  const nextStartHoldMs = (): number => Math.min(maxStartHoldMs, Math.max(minStartHoldMs, startHoldMs * 2));
  /** How long after a transaction starts a refusal naming it may be the charger not knowing it yet, clock ms. */
  const txSettleMs = 30_000;
  const refused = (err: unknown): err is WattshiftError => err instanceof WattshiftError && err.code === 'OCPP_CALL_FAILED';

  /**
   * Applies `a` to the running session, or starts one when allowed; without a session nothing is
   * sent. A refused limit below the one the charger last accepted for the session (or below its
   * maximum, when that is not known) stops the session: a limit that cannot be set must not leave
   * the car drawing more. A refused higher one leaves the lower one in force and fails.
   */
  const apply = async (a: number, mayStart: boolean, signal: AbortSignal): Promise<void> => {
    if (!link.connected) throw unreachable;
    const tx = link.transactionOn(connectorId);
    if (tx !== undefined && txSeen?.id !== tx) txSeen = { id: tx, atMs: clock.nowMs() };
    if (tx === undefined) {
      // What a session the charger starts by itself begins at; one that refuses it begins at the safe current.
      try {
        await setDefault('leased', a, signal);
        defaultRefused = false;
      } catch (err) {
        if (!refused(err)) throw err;
        if (!defaultRefused)
          log.warn(
            { code: 'OCPP_DEFAULT_REFUSED', currentA: a, err: err.message },
            'the charger refused the default limit: a session it starts by itself begins at the safe current',
          );
        defaultRefused = true;
      }
      if (mayStart && a > 0 && plugged() && clock.nowMs() >= noStartBeforeMs) {
        await link.request('RemoteStartTransaction', { connectorId, idTag: options.idTag, chargingProfile: profile('session', a) }, signal);
        acceptedA = a;
      }
      return;
    }
    // A charger learns its transaction's id from the answer to its StartTransaction: a request
    // naming it that crosses that answer is refused, and the next tick asks again (no stop).
    const justStarted = clock.nowMs() - (txSeen?.atMs ?? -Infinity) < txSettleMs;
    try {
      await link.request('SetChargingProfile', { connectorId, csChargingProfiles: profile('session', a, tx) }, signal);
      acceptedA = a;
      refusedBoth = undefined;
      startHoldMs = 0;
      return;
    } catch (err) {
      if (!refused(err) || !(a === 0 || a < (acceptedA ?? options.maxCurrentA))) throw err;
      if (justStarted) {
        log.warn(
          { code: 'OCPP_LIMIT_REFUSED', currentA: a, err: err.message },
          'the charger refused a lower limit for a transaction it has just started: asking again at the next tick',
        );
        throw err;
      }
      // A transaction that ended while the limit was on its way is not stopped: the charger has none.
      if (link.transactionOn(connectorId) !== tx) return;
      const holdS = nextStartHoldMs() / 1000;
      log.warn(
        { code: 'OCPP_LIMIT_REFUSED', currentA: a, holdS, err: err.message },
        `the charger refused a lower limit: stopping the session instead, and starting none for ${holdS / 60} min`,
      );
    }
    try {
      await link.request('RemoteStopTransaction', { transactionId: tx }, signal);
      refusedBoth = undefined;
      startHoldMs = nextStartHoldMs();
      noStartBeforeMs = clock.nowMs() + startHoldMs;
    } catch (err) {
      if (!refused(err)) throw err;
      if (refusedBoth?.tx !== tx) {
        // A charger refuses both for a transaction it has just ended: its StopTransaction (or an
        // Available status) may be on the way. Its status says; the next tick tries again.
        refusedBoth = { tx, uncontrolled: false };
        log.warn(
          { code: 'OCPP_CALL_FAILED', transactionId: tx, currentA: a },
          'the charger refused the lower limit and the remote stop: asking for its status, the transaction may have just ended',
        );
        void link.request('TriggerMessage', { requestedMessage: 'StatusNotification', connectorId }, closed.signal).catch(() => undefined);
        throw new WattshiftError('OCPP_CALL_FAILED', `${device}: refused the ${a} A limit and the remote stop for transaction ${tx}`, {
          cause: err,
          details: { device },
        });
      }
      if (!refusedBoth.uncontrolled)
        log.error(
          { code: 'OCPP_CHARGER_UNCONTROLLED', currentA: a, err: err.message },
          'the charger refused both the lower limit and the remote stop',
        );
      refusedBoth.uncontrolled = true;
      throw new WattshiftError('OCPP_CHARGER_UNCONTROLLED', `${device}: refused the ${a} A limit and the remote stop`, {
        cause: err,
        details: { device },
      });
    }
  };

  const onEvent = (e: LinkEvent): void => {
    switch (e.type) {
      case 'connected':
        values.setOffline(undefined);
        values.heard();
        void resync();
        return;
      case 'disconnected':
        values.setOffline(unreachable);
        return;
      case 'heard':
        values.heard();
        return;
      case 'status':
        if (e.connectorId !== connectorId && !(e.connectorId === 0 && e.status === 'Faulted')) return values.heard();
        if (e.connectorId === connectorId && unplugged.has(e.status)) tags = {};
        values.put('status', e.status);
        if (idle.has(e.status)) values.put('powerW', 0);
        return;
      case 'meter':
        if (e.connectorId !== connectorId) return values.heard();
        if (e.reading.energyWh !== undefined) values.put('energyWh', e.reading.energyWh);
        if (e.reading.powerW !== undefined) values.put('powerW', e.reading.powerW);
        return;
      case 'authorized':
        // wattshift's own tag (its remote starts) names no car.
        if (e.idTag !== options.idTag) tags.authorized = e.idTag;
        return;
      case 'transaction':
        if (e.connectorId === connectorId) rememberSession(e.transactionId, e.idTag, e.meterStartWh);
        if (e.connectorId === connectorId && e.transactionId === undefined) {
          acceptedA = undefined;
          // The next car starts at the limit now, under a fresh lease.
          void renew();
        }
        // A session that starts after the limit was set gets it at once (it began at the default).
        if (e.connectorId === connectorId && e.transactionId !== undefined && limitA !== undefined) void renew();
    }
  };

  /**
   * A transaction that starts is kept (for a restart) with the car's tag and the register at its
   * start; one learnt after a restart from its meter values, which name neither, gets them back
   * from the store. The store is read once: only this charger writes its key.
   */
  let kept = options.sessionTags?.get();
  const rememberSession = (transactionId: number | undefined, idTag: string | undefined, meterStartWh: number | undefined): void => {
    const keep = (session: KeptSession | undefined): void => {
      kept = session;
      options.sessionTags?.set(session);
    };
    if (transactionId === undefined) {
      if (kept !== undefined) keep(undefined);
      return;
    }
    const carTag = idTag !== undefined && idTag !== options.idTag ? idTag : undefined;
    if (meterStartWh !== undefined || carTag !== undefined) {
      // Heard from its StartTransaction.
      sessionStartWh = meterStartWh;
      if (carTag !== undefined) tags.started = carTag;
      if (kept?.transactionId !== transactionId)
        keep({ transactionId, ...(carTag !== undefined ? { idTag: carTag } : {}), ...(meterStartWh !== undefined ? { meterStartWh } : {}) });
      return;
    }
    if (kept?.transactionId === transactionId) {
      sessionStartWh = kept.meterStartWh;
      if (kept.idTag !== undefined) tags.started = kept.idTag;
    } else {
      sessionStartWh = undefined;
    }
  };

  /** The limit again, with a fresh lease: the session's, or without one the default a new session starts at. */
  const renew = async (): Promise<void> => {
    if (limitA === undefined) return;
    await apply(limitA, false, closed.signal).catch((err: unknown) => {
      log.warn(
        { code: codeOf(err, 'OCPP_CALL_FAILED'), err: err instanceof Error ? err.message : String(err) },
        'renewing the charging limit failed',
      );
    });
  };

  /** After a (re)connection: the safe default first, a cap wattshift put into it again, then the session's limit again. */
  const resync = async (): Promise<void> => {
    await setDefault('safe', amps(options.safeCurrentA), closed.signal).catch((err: unknown) => {
      log.warn(
        { code: codeOf(err, 'OCPP_CALL_FAILED'), err: err instanceof Error ? err.message : String(err) },
        'setting the default charging profile failed',
      );
    });
    await sendCap(closed.signal).catch((err: unknown) => {
      log.warn(
        { code: codeOf(err, 'OCPP_CALL_FAILED'), err: err instanceof Error ? err.message : String(err) },
        'putting the cap into the charge point again failed',
      );
    });
    await renew();
  };

  const unsubscribe = link.subscribe(onEvent);
  void (async () => {
    while (!closed.signal.aborted) {
      await clock.sleep(leaseMs / 2, closed.signal).catch(() => undefined);
      if (!closed.signal.aborted && link.connected) await renew();
    }
  })();

  return {
    chargeCurrentLimit: {
      async setCurrentA(currentA, signal) {
        const a = amps(currentA);
        limitA = a;
        await apply(a, true, signal);
      },
      async limitCurrentA(maxA, signal) {
        const a = Math.min(limitA ?? options.maxCurrentA, amps(maxA));
        limitA = a;
        await apply(a, false, signal);
      },
      async releaseCurrentA(maxA, signal) {
        if (!link.connected) throw unreachable;
        await setDefault('safe', Math.min(amps(options.safeCurrentA), amps(maxA)), signal);
        limitA = undefined;
        // Unknown: the charger holds no such profile, which is the state asked for.
        for (const id of [txProfileId, leasedDefaultProfileId]) await link.request('ClearChargingProfile', { id }, signal, ['Accepted', 'Unknown']);
      },
      async holdCapA(cap, signal) {
        if (!link.connected) throw unreachable;
        if (cap === undefined) {
          heldCap = undefined;
          await link.request('ClearChargingProfile', { id: capProfileId }, signal, ['Accepted', 'Unknown']);
          return;
        }
        heldCap = { a: amps(cap.maxCurrentA), untilMs: Math.min(cap.untilMs, clock.nowMs() + ocppCapHoldMaxMs) };
        try {
          await sendCap(signal);
          capRefused = false;
        } catch (err) {
          if (!refused(err)) throw err;
          // Not a fault of the charger's control: the cap holds while wattshift runs, and is no longer promised beyond.
          if (!capRefused)
            log.warn(
              { code: 'OCPP_CAP_REFUSED', currentA: heldCap.a, err: err.message },
              'the charger refused the cap as its own limit: the cap holds only while wattshift runs',
            );
          capRefused = true;
          heldCap = undefined;
        }
      },
    },
    /** What it holds by itself: none once it refused a cap profile (until it accepts one again). */
    chargerHoldsCapMs: () => (capRefused ? 0 : ocppCapHoldMaxMs),
    phaseSwitch: {
      async setPhases(n, signal) {
        if (phases === n) return;
        phases = n;
        // The session's limit again, now with the phase count (a running session only; a start carries it).
        if (limitA !== undefined) await apply(limitA, false, signal);
      },
    },
    energyMeter: pushedEnergyMeter(
      async () => values.getStamped('energyWh'),
      (wh) => metered('energyWh', wh, `${device} energy`) / 1000,
    ),
    // Power.Active.Import: a register with a direction, never negative.
    powerMeter: { readPowerW: async () => metered('directedPowerW', values.get('powerW'), `${device} power`) },
    evStateReader: {
      readEvState: async (): Promise<EvState> => {
        const status = values.get('status') as ChargePointStatus;
        if (status === 'Faulted')
          throw new WattshiftError('OCPP_CHARGER_FAULTED', `${device}: connector ${connectorId} is Faulted`, { details: { device } });
        const wh = values.peek('energyWh') as number | undefined;
        const sessionKwh = sessionStartWh !== undefined && wh !== undefined ? Math.max(0, wh - sessionStartWh) / 1000 : undefined;
        const idTag = unplugged.has(status) ? undefined : (tags.started ?? tags.authorized);
        return {
          plugged: !unplugged.has(status),
          charging: status === 'Charging',
          connectorStatus: status,
          ...(sessionKwh !== undefined ? { sessionKwh } : {}),
          ...(idTag !== undefined ? { idTag } : {}),
        };
      },
    },
    close() {
      closed.abort();
      unsubscribe();
    },
  };
}
