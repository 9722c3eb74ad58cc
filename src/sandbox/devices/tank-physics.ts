/**
 * Physics of a simulated electric hot water tank: one-node energy balance (heat capacity 1.163 Wh per litre and kelvin)
 * with a thermostat, standing losses and hot water draws, plus a relay in series with the element
 * (energised = blocked) that can carry a release timer (device-side lease).
 *
 * Time only moves through `advanceTo`, so the owner decides: an injected Clock, a test's explicit
 * steps, or the Modbus server syncing on each request. The element energy it delivers is the
 * ground truth (per UTC hour) that metering tests compare against.
 */

export const KWH_PER_LITRE_KELVIN = 0.001163;

export interface TankParams {
  volumeL: number;
  elementKw: number;
  coldC: number;
  ambientC: number;
  /** Standing loss, W per kelvin above ambient. */
  uaWPerK: number;
  /** Thermostat opens at this temperature… */
  thermostatC: number;
  /** …and closes again this many kelvin below it. */
  hysteresisK: number;
}

export const defaultTankParams: TankParams = {
  volumeL: 200,
  elementKw: 2,
  coldC: 8,
  ambientC: 20,
  uaWPerK: 1.6,
  thermostatC: 75,
  hysteresisK: 5,
};

/** A hot water draw at a UTC minute of the day, kWh of heat relative to cold water. */
export interface Draw {
  minuteOfDay: number;
  kwh: number;
}

/** EN 16147 tapping cycle "M" (5.845 kWh/day, as EN 16147 gives it), taken as UTC times. */
export const profileMDraws: readonly Draw[] = [
  [420, 0.105],
  [425, 1.4],
  [450, 0.105],
  [481, 0.105],
  [495, 0.105],
  [510, 0.105],
  [525, 0.105],
  [540, 0.105],
  [570, 0.105],
  [630, 0.105],
  [690, 0.105],
  [705, 0.105],
  [765, 0.315],
  [870, 0.105],
  [930, 0.105],
  [990, 0.105],
  [1080, 0.105],
  [1095, 0.105],
  [1110, 0.105],
  [1140, 0.105],
  [1230, 0.735],
  [1275, 0.105],
  [1290, 1.4],
].map(([minuteOfDay, kwh]) => ({ minuteOfDay: minuteOfDay!, kwh: kwh! }));

export interface TankPhysicsOptions {
  startMs: number;
  params?: Partial<TankParams>;
  initialC?: number;
  /** Meter counter at start, kWh. */
  initialCounterKwh?: number;
  /** Daily draws; default EN 16147 "M". Pass [] for none. */
  draws?: readonly Draw[];
  /** Longest integration step, ms. Default 1000. */
  maxStepMs?: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export class TankPhysics {
  readonly params: TankParams;
  nowMs: number;
  tempC: number;
  /** Thermostat contact closed (calls for heat). */
  thermostatClosed: boolean;
  /** Relay coil energised = heating blocked. */
  blocked = false;
  /** When the release timer frees the relay, epoch ms; null = no timer. */
  leaseUntilMs: number | null = null;
  /** The meter's counter register, kWh (resettable). */
  counterKwh: number;
  /** All element energy since start (never reset), kWh. */
  trueEnergyKwh = 0;
  drawnKwh = 0;
  private readonly truthByHour = new Map<number, number>();
  private readonly draws: readonly Draw[];
  private readonly maxStepMs: number;

  constructor(options: TankPhysicsOptions) {
    this.params = { ...defaultTankParams, ...options.params };
    this.nowMs = options.startMs;
    this.tempC = options.initialC ?? this.params.thermostatC - this.params.hysteresisK / 2;
    this.thermostatClosed = this.tempC <= this.params.thermostatC - this.params.hysteresisK;
    this.counterKwh = options.initialCounterKwh ?? 0;
    this.draws = [...(options.draws ?? profileMDraws)].sort((a, b) => a.minuteOfDay - b.minuteOfDay);
    this.maxStepMs = options.maxStepMs ?? 1000;
  }

  get capacityKwhPerK(): number {
    return this.params.volumeL * KWH_PER_LITRE_KELVIN;
  }

  /** The element is drawing power right now. */
  get heating(): boolean {
    return this.thermostatClosed && !this.blocked;
  }

  get powerW(): number {
    return this.heating ? this.params.elementKw * 1000 : 0;
  }

  /** Energises (true) or releases the relay. A release also cancels the timer. */
  setBlocked(blocked: boolean): void {
    this.blocked = blocked;
    if (!blocked) this.leaseUntilMs = null;
  }

  /** Arms the release timer: the relay is released `seconds` from now (0 disarms it). */
  setLeaseS(seconds: number): void {
    this.leaseUntilMs = seconds > 0 ? this.nowMs + seconds * 1000 : null;
  }

  get leaseRemainingS(): number {
    return this.leaseUntilMs === null ? 0 : Math.max(0, Math.ceil((this.leaseUntilMs - this.nowMs) / 1000));
  }

  /** The meter was reset or exchanged: its counter restarts at `kwh`. */
  resetCounter(kwh = 0): void {
    this.counterKwh = kwh;
  }

  /** Takes hot water now. */
  draw(kwh: number): void {
    const c = this.capacityKwhPerK;
    const available = Math.max(0, (this.tempC - this.params.coldC) * c);
    const taken = Math.min(kwh, available);
    this.tempC -= taken / c;
    this.drawnKwh += taken;
    this.updateThermostat();
  }

  /** Element energy per UTC hour start (ground truth). */
  hourlyTruthKwh(): Map<number, number> {
    return new Map(this.truthByHour);
  }

  private nextDrawAfter(ms: number): { atMs: number; kwh: number } | null {
    if (this.draws.length === 0) return null;
    const day = Math.floor(ms / DAY_MS) * DAY_MS;
    for (const offset of [0, DAY_MS]) {
      for (const d of this.draws) {
        const at = day + offset + d.minuteOfDay * MINUTE_MS;
        if (at > ms) return { atMs: at, kwh: d.kwh };
      }
    }
    return null;
  }

  private updateThermostat(): void {
    const p = this.params;
    if (this.thermostatClosed && this.tempC >= p.thermostatC) this.thermostatClosed = false;
    else if (!this.thermostatClosed && this.tempC <= p.thermostatC - p.hysteresisK) this.thermostatClosed = true;
  }

  /** Runs the physics forward to `targetMs` (never backwards). */
  advanceTo(targetMs: number): void {
    let nextDraw = this.nextDrawAfter(this.nowMs);
    while (this.nowMs < targetMs) {
      let stepEnd = Math.min(targetMs, this.nowMs + this.maxStepMs, Math.floor(this.nowMs / HOUR_MS) * HOUR_MS + HOUR_MS);
      if (nextDraw && nextDraw.atMs < stepEnd) stepEnd = nextDraw.atMs;
      if (this.leaseUntilMs !== null && this.blocked && this.leaseUntilMs < stepEnd) stepEnd = Math.max(this.nowMs, this.leaseUntilMs);
      const dtH = (stepEnd - this.nowMs) / HOUR_MS;
      if (dtH > 0) {
        const p = this.params;
        const elementKw = this.heating ? p.elementKw : 0;
        const lossKw = (p.uaWPerK * (this.tempC - p.ambientC)) / 1000;
        this.tempC += ((elementKw - lossKw) * dtH) / this.capacityKwhPerK;
        const e = elementKw * dtH;
        if (e > 0) {
          this.counterKwh += e;
          this.trueEnergyKwh += e;
          const hour = Math.floor(this.nowMs / HOUR_MS) * HOUR_MS;
          this.truthByHour.set(hour, (this.truthByHour.get(hour) ?? 0) + e);
        }
      }
      this.nowMs = stepEnd;
      if (this.leaseUntilMs !== null && this.nowMs >= this.leaseUntilMs) this.setBlocked(false);
      if (nextDraw && this.nowMs >= nextDraw.atMs) {
        this.draw(nextDraw.kwh);
        nextDraw = this.nextDrawAfter(this.nowMs);
      }
      this.updateThermostat();
    }
  }
}
