/**
 * A simulated heat pump water heater with an SG Ready input, driven by a two-channel Modbus TCP
 * relay board (profile `wattshift-sim-heat-pump`): coil 0 is relay 1 on SG Ready contact 1, coil 1
 * relay 2 on contact 2, each energised = contact closed (the relays' normally-open contacts), with
 * a release timer per channel (holding 0x0200 + channel, s; 0 = none). The pump's own electricity
 * meter and tank sensor sit on the same unit id, at the addresses of the simulated tank
 * (`modbus-tank.ts`: power 0x000C and energy 0x0048 in the SDM120 layout, temperature 0x0100).
 *
 * The pump follows the four operating states of the SG Ready label (Bundesverband Wärmepumpe,
 * "SG Ready" Regularien, 2.1 Heizungswärmepumpen; contact 1 : contact 2):
 *  - "1:0", state 1: the utility lock, downward compatible with the utility's fixed-time lock and
 *    "at most 2 hours of hard lock": the compressor does not run, and the pump ends a lock by itself
 *    after `maxLockMinutes` (120), running normally until the contact opens;
 *  - "0:0", state 2: energy-efficient normal operation: its own thermostat holds `normalC`;
 *  - "0:1", state 3: "a switch-on recommendation", not a definitive start: the setpoint rises to
 *    `boostC`, so it starts only where the tank is below that setpoint less the hysteresis;
 *  - "1:1", state 4: "a definitive start command, insofar as the controller settings allow it",
 *    with a higher storage temperature (the label's variant 2): it starts at once and runs to `maxC`.
 *
 * Heat physics are the tank's (`tank-physics.ts`) with the heat output `electricKw × cop`; the
 * meter counts electricity, heat / cop. Time moves with the clock on each request (when given) and
 * by `advance(ms)`.
 */
import type { Clock } from '../../ports.js';
import { sgContacts, type SgState } from '../../core/heat-pump.js';
import {
  meterInputWords,
  modbusError,
  serveModbusSim,
  simRegisterHandlers,
  simTankRegisters,
  type ModbusSimServer,
  type SimServerOptions,
} from './modbus-sim.js';
import { TankPhysics, type Draw } from './tank-physics.js';

export interface SgReadyHeatPumpOptions extends SimServerOptions {
  clock?: Clock;
  startMs?: number;
  /** Electric power while the compressor runs, kW (default 0.5, a typical heat pump water heater). */
  electricKw?: number;
  /** Heat per kWh of electricity (default 2.8). */
  cop?: number;
  normalC?: number;
  boostC?: number;
  maxC?: number;
  hysteresisK?: number;
  /** The pump ends a lock by itself after this long, minutes (the label: at most 2 hours). */
  maxLockMinutes?: number;
  tank?: { volumeL?: number; initialC?: number; ambientC?: number; lossWPerK?: number; coldC?: number };
  draws?: readonly Draw[];
}

export interface HeatPumpSnapshot {
  nowMs: number;
  tempC: number;
  /** The contacts' state, contact 1 : contact 2. */
  contacts: SgState;
  /** What the pump does: a lock it ended by itself runs as normal. */
  operating: SgState;
  heating: boolean;
  /** Electric power, W. */
  powerW: number;
  electricKwh: number;
  heatKwh: number;
  /** When the running lock began, if the contacts say lock. */
  lockSinceMs: number | null;
}

export interface SgReadyHeatPump extends ModbusSimServer {
  readonly physics: TankPhysics;
  state(): HeatPumpSnapshot;
  /** The operating states in order, with when each began (tests of the label's rules). */
  history(): { atMs: number; operating: SgState }[];
  advance(ms: number): void;
  sync(): void;
  /** Electric energy per UTC hour start, kWh (ground truth). */
  hourlyElectricKwh(): Map<number, number>;
  writes(): { coil: number; timer: number };
}

const stateOf = (c1: boolean, c2: boolean): SgState =>
  (Object.keys(sgContacts) as SgState[]).find((s) => sgContacts[s][0] === c1 && sgContacts[s][1] === c2)!;

export async function startSgReadyHeatPump(options: SgReadyHeatPumpOptions = {}): Promise<SgReadyHeatPump> {
  const { clock } = options;
  const cop = options.cop ?? 2.8;
  const electricKw = options.electricKw ?? 0.5;
  const normalC = options.normalC ?? 50;
  const boostC = options.boostC ?? 60;
  const maxC = options.maxC ?? 65;
  const maxLockMs = (options.maxLockMinutes ?? 120) * 60_000;
  const startMs = options.startMs ?? clock?.nowMs() ?? Date.UTC(2026, 0, 1);
  const physics = new TankPhysics({
    startMs,
    params: {
      elementKw: electricKw * cop,
      thermostatC: normalC,
      hysteresisK: options.hysteresisK ?? 5,
      ...(options.tank?.volumeL !== undefined ? { volumeL: options.tank.volumeL } : {}),
      ...(options.tank?.ambientC !== undefined ? { ambientC: options.tank.ambientC } : {}),
      ...(options.tank?.lossWPerK !== undefined ? { uaWPerK: options.tank.lossWPerK } : {}),
      ...(options.tank?.coldC !== undefined ? { coldC: options.tank.coldC } : {}),
    },
    initialC: options.tank?.initialC ?? normalC - 2,
    ...(options.draws ? { draws: options.draws } : {}),
  });
  const coils: [boolean, boolean] = [false, false];
  const leaseUntil: [number | null, number | null] = [null, null];
  let lockSinceMs: number | null = null;
  let operating: SgState = 'normal';
  const log: { atMs: number; operating: SgState }[] = [{ atMs: startMs, operating }];
  const writes = { coil: 0, timer: 0 };

  /** The pump's controller: what it does for the contacts now. */
  const control = (): void => {
    const contacts = stateOf(coils[0], coils[1]);
    if (contacts !== 'block') lockSinceMs = null;
    else lockSinceMs ??= physics.nowMs;
    const lockOver = lockSinceMs !== null && physics.nowMs - lockSinceMs >= maxLockMs;
    const next: SgState = contacts === 'block' && lockOver ? 'normal' : contacts;
    physics.blocked = next === 'block';
    physics.params.thermostatC = next === 'boost' ? boostC : next === 'forced' ? maxC : normalC;
    if (next === 'forced' && operating !== 'forced' && physics.tempC < maxC) physics.thermostatClosed = true;
    if (next !== operating) log.push({ atMs: physics.nowMs, operating: next });
    operating = next;
  };

  /** Runs time forward, stopping at each release timer and at the lock's end. */
  const advanceTo = (targetMs: number): void => {
    control();
    while (physics.nowMs < targetMs) {
      const events = [targetMs, ...leaseUntil.filter((t): t is number => t !== null && t > physics.nowMs)];
      if (lockSinceMs !== null && operating === 'block') events.push(lockSinceMs + maxLockMs);
      physics.advanceTo(Math.min(...events));
      leaseUntil.forEach((t, i) => {
        if (t !== null && t <= physics.nowMs) {
          coils[i] = false;
          leaseUntil[i] = null;
        }
      });
      control();
    }
  };
  const sync = (): void => {
    if (clock) advanceTo(clock.nowMs());
  };

  const powerW = (): number => (physics.heating ? electricKw * 1000 : 0);
  const channel = (addr: number, base: number): 0 | 1 => {
    if (addr !== base && addr !== base + 1) throw modbusError(2, `no such address ${addr}`);
    return addr === base ? 0 : 1;
  };
  const leaseS = (c: 0 | 1): number => {
    const t = leaseUntil[c];
    return t === null ? 0 : Math.min(0xffff, Math.max(0, Math.ceil((t - physics.nowMs) / 1000)));
  };

  const handlers = simRegisterHandlers({
    sync,
    inputWords: () => meterInputWords({ powerW: powerW(), energyKwh: physics.counterKwh / cop, tempTenthsC: Math.round(physics.tempC * 10) }),
    holding: (addr, length) => Array.from({ length }, (_, i) => leaseS(channel(addr + i, simTankRegisters.leaseHolding))),
    coil: (addr) => coils[channel(addr, simTankRegisters.relayCoil)],
    setCoil: (addr, value) => {
      const c = channel(addr, simTankRegisters.relayCoil);
      writes.coil++;
      coils[c] = value;
      // A release also cancels its timer, as on the simulated tank's relay.
      if (!value) leaseUntil[c] = null;
      control();
    },
    setRegister: (addr, value) => {
      const c = channel(addr, simTankRegisters.leaseHolding);
      writes.timer++;
      leaseUntil[c] = value > 0 ? physics.nowMs + value * 1000 : null;
    },
  });

  return serveModbusSim(handlers, options, {
    physics,
    state: (): HeatPumpSnapshot => {
      sync();
      return {
        nowMs: physics.nowMs,
        tempC: physics.tempC,
        contacts: stateOf(coils[0], coils[1]),
        operating,
        heating: physics.heating,
        powerW: powerW(),
        electricKwh: physics.counterKwh / cop,
        heatKwh: physics.trueEnergyKwh,
        lockSinceMs,
      };
    },
    history: () => [...log],
    advance: (ms: number) => advanceTo(physics.nowMs + ms),
    sync,
    hourlyElectricKwh: () => new Map([...physics.hourlyTruthKwh()].map(([h, kwh]) => [h, kwh / cop])),
    writes: () => ({ ...writes }),
  });
}
