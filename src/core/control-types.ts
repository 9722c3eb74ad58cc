/**
 * The types the control decision shares with the device kinds' own rules (heat-pump.ts): the
 * user's mode, the plan's target for the slot, and what the main fuse's reading saw of a heater.
 * Declared apart so those rules need not import control.ts, which imports them.
 */

export type DeviceMode = 'auto' | 'off' | 'boost';

export interface SlotTarget {
  /** Planned energy for the whole slot, kWh. */
  energyKwh: number;
  /** Planned average power, kW. */
  powerKw: number;
  /** Consuming in this slot is paid for (its effective price is negative). */
  paidToConsume?: boolean;
  /** Hours left of the slot now; with it a charger behind its slot's energy catches up. */
  leftH?: number;
}

/**
 * Drawing only since the main fuse's phase reading was taken (or a little before it): its current
 * is not surely in that reading. Unknown (undefined): only a heater not drawing counts as such.
 */
export interface HeaterPhaseSeen {
  sincePhaseReading?: boolean;
}
