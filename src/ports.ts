import type { SgState } from './core/heat-pump.js';

/**
 * Small capability interfaces the daemon depends on. Units are in the names. A device implements
 * the set of capabilities it has (src/devices/supervisor.ts, `DeviceCapabilities`), each one optional.
 */

/** Time source. Everything that waits takes one, so tests and the demo can run days in seconds. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Allows or blocks a heater. The safe (unpowered, timed-out) state is always "allowed". */
export interface HeaterSwitch {
  /**
   * Blocks heating for at most `leaseMs`; the device falls back to "allowed" when the lease
   * expires without renewal, where the device supports it.
   */
  block(leaseMs: number, signal: AbortSignal): Promise<void>;
  /** Allows heating (the safe state). */
  allow(signal: AbortSignal): Promise<void>;
  /**
   * Whether a block ends on the device by itself when not renewed (a release timer, Shelly
   * `toggle_after`, Tasmota `PulseTime`). Without one a block holds until it is released or the
   * device loses power, so it is written once and reported as not lease-protected.
   */
  readonly deviceLease: boolean;
  /** Longest lease the device's timer takes, ms (a block held for a cap is written up to this). Default: no longer than asked. */
  readonly maxLeaseMs?: number;
}

/** The SG Ready input of a heat pump: two contacts, four operating states (see `core/heat-pump.ts`). */
export interface SgReadyInput {
  /**
   * Sets both contacts for `state`; a closed contact opens by itself after `leaseMs` where the
   * relays have a device-side timer (`deviceLease`), so a lost daemon leaves the pump in "0:0".
   */
  setState(state: SgState, leaseMs: number, signal: AbortSignal): Promise<void>;
  readonly deviceLease: boolean;
}

/** A thermostat whose setpoint wattshift moves (a heated zone's); it keeps the last one written when wattshift is gone. */
export interface ThermostatSetpoint {
  /** The setpoint the thermostat last reported, °C; rejects when it is unknown or stale. */
  readSetpointC(signal: AbortSignal): Promise<number>;
  /** Writes a setpoint, °C (already within the thermostat's limits and step). */
  writeSetpointC(setpointC: number, signal: AbortSignal): Promise<void>;
}

/** Limits an EV charger's current; 0 A pauses charging. */
export interface ChargeCurrentLimit {
  /** Sets the charging current per phase, in amperes. */
  setCurrentA(currentA: number, signal: AbortSignal): Promise<void>;
  /**
   * Lowers the current to at most `maxCurrentA` without starting a charge that is paused (below the
   * minimum current it pauses). Chargers whose current register is itself only a limit omit it, and
   * `setCurrentA` serves. Used for safe states, which must never start a load.
   */
  limitCurrentA?(maxCurrentA: number, signal: AbortSignal): Promise<void>;
  /**
   * Hands charging back to the charger's own logic at no more than `maxCurrentA` (below the minimum:
   * paused), for a clean stop. Chargers that wattshift does not force on omit it, and `setCurrentA`
   * serves.
   */
  releaseCurrentA?(maxCurrentA: number, signal: AbortSignal): Promise<void>;
  /**
   * Puts a cap of at most `maxCurrentA` into the charger itself until `untilMs` (clock ms), which it
   * holds without wattshift (an OCPP ChargePointMaxProfile with `validTo`); undefined lifts it.
   * Chargers that cannot hold a cap by themselves omit it.
   */
  holdCapA?(cap: { maxCurrentA: number; untilMs: number } | undefined, signal: AbortSignal): Promise<void>;
}

/** A cumulative energy counter. */
export interface EnergyMeter {
  /** Total imported energy, kWh, monotonic except on a counter reset or wrap. */
  readEnergyKwh(signal: AbortSignal): Promise<number>;
  /**
   * Counters the device pushes: the last value with the clock time it arrived, so that it is
   * metered at that time rather than when it is read. Absent for polled counters.
   */
  readStampedEnergyKwh?(signal: AbortSignal): Promise<{ kwh: number; atMs: number }>;
  /** Total exported energy, kWh, where the meter counts it (a main meter with solar). */
  readExportEnergyKwh?(signal: AbortSignal): Promise<number>;
}

/** Per-phase currents and voltages (L1, L2, L3; one entry on a 1-phase meter). */
export interface PhaseReading {
  /** Current per line L1.., A; NaN for a line the meter does not measure. */
  currentsA: number[];
  /** Empty when the meter does not give them. */
  voltagesV: number[];
  /** When the values arrived, clock ms. */
  atMs: number;
}

export interface PhaseMeter {
  readPhases(signal: AbortSignal): Promise<PhaseReading>;
}

/** Instantaneous active power. */
export interface PowerMeter {
  /** Active power, W; positive is consumption. */
  readPowerW(signal: AbortSignal): Promise<number>;
}

/** A temperature sensor. */
export interface Thermometer {
  /** Temperature, °C. */
  readTemperatureC(signal: AbortSignal): Promise<number>;
}

/** What an EV charger knows about the car. */
export interface EvState {
  plugged: boolean;
  charging: boolean;
  /** State of charge in percent, when the charger or car reports it. */
  socPct?: number;
  /** Energy of the running (or, after it, the last) charging session, kWh, when the charger knows it. */
  sessionKwh?: number;
  /** The charger's own word for its connector's state, where it has one (OCPP 1.6 ChargePointStatus). */
  connectorStatus?: string;
  /** The OCPP id tag that authorised or started the session (the car's card or token), when known. */
  idTag?: string;
  /** The go-e RFID card index (0..9) of the session, when it was started with a card. */
  goeCard?: number;
  /** The phases the charger charges on now, where it says (go-e `pnp`). */
  phases?: number;
}

/** Switches a charger between 1 and 3 phases (a persisted setting on some chargers: write on change only). */
export interface PhaseSwitch {
  setPhases(phases: 1 | 3, signal: AbortSignal): Promise<void>;
}

export interface EvStateReader {
  readEvState(signal: AbortSignal): Promise<EvState>;
}
