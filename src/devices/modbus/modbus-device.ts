/**
 * Builds the capabilities of `src/ports.ts` from a Modbus source config and its profile.
 *
 * Heater switch and fail-safe: the relay's coil ENERGISED means heating BLOCKED (wire the heater
 * through the normally-closed contact), so an unpowered or reset board allows heating. A plain
 * Modbus relay has no device-side lease: a block stays until it is released or the board loses
 * power, so the daemon must re-assert blocks while healthy and release them on a clean stop.
 * When the profile declares `relayLease` (a release-timer register), `block(leaseMs)` writes the
 * timer first and then energises the coil, so the device itself falls back to "allowed" when the
 * daemon stops renewing.
 */
import type { ModbusSource } from '../../config/schema.js';
import { WattshiftError, isWattshiftError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ChargeCurrentLimit, EnergyMeter, EvState, EvStateReader, HeaterSwitch, PowerMeter, Thermometer } from '../../ports.js';
import type { ModbusBus } from './bus.js';
import { metered } from '../../core/metered-bounds.js';
import { getPoint, readBoolean, readNumber, readPoint, writePoint, type PointValue } from './points.js';
import type { ModbusProfile } from './profile-schema.js';

export interface ModbusDeviceDeps {
  bus: ModbusBus;
  profile: ModbusProfile;
  logger: Logger;
}

export interface ModbusHeaterSwitch extends HeaterSwitch {
  /** Reads the coil back: true = energised = blocked. */
  readBlocked(signal: AbortSignal): Promise<boolean>;
}

export interface ModbusHeartbeat {
  readonly everyMs: number;
  beat(signal: AbortSignal): Promise<void>;
}

export interface ModbusCapabilities {
  heaterSwitch?: ModbusHeaterSwitch;
  energyMeter?: EnergyMeter;
  powerMeter?: PowerMeter;
  thermometer?: Thermometer;
  chargeCurrentLimit?: ChargeCurrentLimit;
  evState?: EvStateReader;
  /** A watchdog the daemon must feed every `everyMs` (openWB, Vestel). */
  heartbeat?: ModbusHeartbeat;
  /** A charger that stops charging by itself when wattshift goes silent holds any cap: see the profile's `commLoss`. */
  chargerHoldsCapMs?: () => number;
}

/** Which slot of a device config the source sits in. */
export type ModbusRole = 'switch' | 'meter' | 'thermometer' | 'charger';

export class ModbusDevice {
  readonly unitId: number;
  readonly channel: number;
  private readonly log: Logger;

  constructor(
    readonly source: ModbusSource,
    private readonly deps: ModbusDeviceDeps,
  ) {
    this.unitId = source.unitId ?? 1;
    this.channel = source.channel ?? 0;
    this.log = deps.logger.child({ component: 'modbus-device', bus: source.bus, unitId: this.unitId, profile: deps.profile.name });
  }

  get profile(): ModbusProfile {
    return this.deps.profile;
  }

  has(point: string): boolean {
    return point in this.deps.profile.points;
  }

  readPoint(name: string, signal?: AbortSignal, channel = 0): Promise<PointValue> {
    return readPoint(this.deps.bus, this.unitId, this.deps.profile, name, channel, signal);
  }

  private num(name: string, signal: AbortSignal): Promise<number> {
    return readNumber(this.deps.bus, this.unitId, this.deps.profile, name, 0, signal);
  }

  private bool(name: string, signal: AbortSignal): Promise<boolean> {
    return readBoolean(this.deps.bus, this.unitId, this.deps.profile, name, 0, signal);
  }

  private write(name: string, value: PointValue, signal: AbortSignal, channel = 0): Promise<void> {
    return writePoint(this.deps.bus, this.unitId, this.deps.profile, name, value, channel, signal);
  }

  /** Throws DEVICE_PROFILE_INVALID when the profile lacks the point. */
  private require(name: string): void {
    getPoint(this.deps.profile, name);
  }

  heaterSwitch(): ModbusHeaterSwitch {
    const relay = getPoint(this.deps.profile, 'relay');
    if (relay.function !== 'coil') throw new WattshiftError('DEVICE_PROFILE_INVALID', 'relay must be a coil');
    const channel = this.channel;
    if (channel >= relay.channels) {
      throw new WattshiftError('DEVICE_PROFILE_INVALID', `channel ${channel} out of range: ${this.deps.profile.name} has ${relay.channels}`);
    }
    const lease = this.deps.profile.relayLease;
    if (!lease) {
      this.log.info('relay has no device-side lease: blocks are held by re-assertion and released on stop');
    }
    return {
      deviceLease: lease !== undefined,
      // A cap's block is written up to the register's largest count, so the board times the window itself.
      ...(lease ? { maxLeaseMs: lease.maxS * 1000 } : {}),
      block: async (leaseMs, signal) => {
        if (lease) {
          const seconds = Math.min(lease.maxS, Math.max(1, Math.ceil(leaseMs / 1000)));
          await this.write(lease.point, seconds, signal, channel);
        }
        await this.write('relay', true, signal, channel);
      },
      allow: (signal) => this.write('relay', false, signal, channel),
      readBlocked: async (signal) => (await readPoint(this.deps.bus, this.unitId, this.deps.profile, 'relay', channel, signal)) === true,
    };
  }

  energyMeter(point = this.source.point ?? 'energyKwh'): EnergyMeter {
    this.require(point);
    return { readEnergyKwh: async (signal) => metered('energyKwh', await this.num(point, signal), `${this.deps.profile.name} ${point}`) };
  }

  powerMeter(point = 'powerW'): PowerMeter {
    this.require(point);
    return { readPowerW: async (signal) => metered('powerW', await this.num(point, signal), `${this.deps.profile.name} ${point}`) };
  }

  thermometer(point = this.source.point ?? 'temperatureC'): Thermometer {
    this.require(point);
    return { readTemperatureC: async (signal) => metered('temperatureC', await this.num(point, signal), `${this.deps.profile.name} ${point}`) };
  }

  chargeCurrentLimit(): ChargeCurrentLimit {
    this.require('currentLimitA');
    return { setCurrentA: (currentA, signal) => this.write('currentLimitA', currentA, signal) };
  }

  evState(): EvStateReader {
    this.require('plugged');
    return {
      readEvState: async (signal) => {
        const state: EvState = {
          plugged: await this.bool('plugged', signal),
          charging: this.has('charging') ? await this.bool('charging', signal) : false,
        };
        if (this.has('socPct')) {
          // Many chargers learn no SoC from the car and fill the register with a sentinel: an
          // unusable SoC is unknown (the planner then estimates), not a failed charger.
          try {
            state.socPct = await this.num('socPct', signal);
          } catch (err) {
            if (!isWattshiftError(err, 'DEVICE_BAD_VALUE')) throw err;
          }
        }
        return state;
      },
    };
  }

  heartbeat(): ModbusHeartbeat | undefined {
    const hb = this.deps.profile.heartbeat;
    if (!hb) return undefined;
    return { everyMs: hb.everyS * 1000, beat: (signal) => this.write(hb.point, hb.value, signal) };
  }

  /** The capabilities this source provides in a role; throws DEVICE_PROFILE_INVALID if it cannot. */
  capabilities(role: ModbusRole): ModbusCapabilities {
    const caps: ModbusCapabilities = {};
    switch (role) {
      case 'switch':
        caps.heaterSwitch = this.heaterSwitch();
        break;
      case 'thermometer':
        caps.thermometer = this.thermometer();
        break;
      case 'meter': {
        const energy = this.source.point ?? 'energyKwh';
        if (this.has(energy)) caps.energyMeter = this.energyMeter(energy);
        if (this.has('powerW')) caps.powerMeter = this.powerMeter();
        if (!caps.energyMeter && !caps.powerMeter) {
          throw new WattshiftError('DEVICE_PROFILE_INVALID', `profile ${this.deps.profile.name} has neither ${energy} nor powerW`);
        }
        break;
      }
      case 'charger':
        caps.chargeCurrentLimit = this.chargeCurrentLimit();
        if (this.has('plugged')) caps.evState = this.evState();
        if (this.has('energyKwh')) caps.energyMeter = this.energyMeter('energyKwh');
        if (this.has('powerW')) caps.powerMeter = this.powerMeter();
        caps.heartbeat = this.heartbeat();
        if (this.deps.profile.commLoss?.currentA === 0) caps.chargerHoldsCapMs = () => Number.POSITIVE_INFINITY;
        break;
    }
    return caps;
  }

  /** Reads every readable point once, for `wattshift probe`; failures are reported per point. */
  async probe(signal?: AbortSignal): Promise<Record<string, { value?: PointValue; unit?: string; error?: { code: string; message: string } }>> {
    const out: Record<string, { value?: PointValue; unit?: string; error?: { code: string; message: string } }> = {};
    for (const [name, p] of Object.entries(this.deps.profile.points)) {
      if (p.access === 'write') continue;
      try {
        out[name] = { value: await this.readPoint(name, signal, name === 'relay' ? this.channel : 0), unit: p.unit };
      } catch (err) {
        const e = err as WattshiftError;
        out[name] = { unit: p.unit, error: { code: e.code ?? 'INTERNAL', message: e.message } };
      }
    }
    return out;
  }
}

export function createModbusDevice(source: ModbusSource, deps: ModbusDeviceDeps): ModbusDevice {
  return new ModbusDevice(source, deps);
}
