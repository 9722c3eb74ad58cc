/**
 * A car battery for the simulated charger: AC energy from the charger goes into the battery with
 * a constant charging efficiency; charging stops at the target state of charge. The model is
 * linear on purpose (no taper) so tests can compute exact expectations.
 */
export interface EvBatteryOptions {
  capacityKwh: number;
  socPct: number;
  /** Charging stops here, percent (default 100). */
  targetSocPct?: number;
  /** Battery energy per AC meter energy (default 0.9). */
  efficiency?: number;
}

export class EvBattery {
  readonly capacityKwh: number;
  readonly targetSocPct: number;
  readonly efficiency: number;
  private storedKwh: number;

  constructor(options: EvBatteryOptions) {
    if (!(options.capacityKwh > 0)) throw new RangeError('capacityKwh must be positive');
    this.capacityKwh = options.capacityKwh;
    this.targetSocPct = options.targetSocPct ?? 100;
    this.efficiency = options.efficiency ?? 0.9;
    this.storedKwh = (Math.min(100, Math.max(0, options.socPct)) / 100) * options.capacityKwh;
  }

  get socPct(): number {
    return (this.storedKwh / this.capacityKwh) * 100;
  }

  get full(): boolean {
    return this.socPct >= this.targetSocPct - 1e-9;
  }

  /** AC energy the battery still accepts, kWh. */
  acKwhToFull(): number {
    return Math.max(0, ((this.targetSocPct / 100) * this.capacityKwh - this.storedKwh) / this.efficiency);
  }

  /** Milliseconds of charging at `acW` until full (Infinity at 0 W). */
  msToFull(acW: number): number {
    return acW > 0 ? (this.acKwhToFull() * 3_600_000_000) / acW : Infinity;
  }

  /** Uses `kwh` of battery energy on the road (never below empty). */
  drive(kwh: number): void {
    this.storedKwh = Math.max(0, this.storedKwh - kwh);
  }

  /** Takes `acKwh` of AC energy (the caller never offers more than `acKwhToFull`). */
  charge(acKwh: number): void {
    const cap = (this.targetSocPct / 100) * this.capacityKwh;
    this.storedKwh = Math.min(cap, this.storedKwh + acKwh * this.efficiency);
  }
}

/**
 * The battery of a plug-in: the car itself when a test follows one car over several plug-ins (its
 * state of charge carries over), else a fresh battery per plug-in.
 */
export function pluggedBattery(battery: EvBatteryOptions | EvBattery): EvBattery {
  return battery instanceof EvBattery ? battery : new EvBattery(battery);
}
