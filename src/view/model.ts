/**
 * The view model: the read-only views that the home-automation bridge, the status page and the CLI
 * render. The composition root maps the daemon's real state onto these, so those faces do not
 * depend on the planner's or the store's internal types. Units are in the names; times are epoch
 * milliseconds. No secrets. The device kinds and modes are the daemon's own words, declared once.
 */
import type { DeviceMode } from '../core/control.js';
import type { DeviceKind } from '../devices/supervisor.js';

export type { DeviceKind, DeviceMode };
/** A heat pump's SG Ready operating state: lock 1:0, normal 0:0, switch-on recommendation 0:1, start command 1:1. */
export type SgStateView = 'block' | 'normal' | 'boost' | 'forced';

export interface EvView {
  plugged: boolean;
  charging: boolean;
  socPct?: number;
  /** Departure time, ISO 8601 with offset. */
  departure?: string;
  targetKwh?: number;
  targetSocPct?: number;
  /** Energy of the running (or last) charging session, kWh, when the charger reports it. */
  sessionKwh?: number;
  /** The connector's state in the charger's own words (OCPP ChargePointStatus), when it has them. */
  connectorStatus?: string;
  /** The configured vehicle recognised at the charger, when one is. */
  vehicle?: { id: string; name: string };
  /** The phases it charges on: the count wattshift set (phase switching), else the one it reports, else its wiring. */
  phases?: 1 | 3;
}

/** The next "hot water ready" deadline of the tank's comfort windows, as planned. */
export interface ComfortView {
  atMs: number;
  tempC: number;
  label: string;
  /** Temperature the plan expects at `atMs`. */
  plannedTempC: number;
  met: boolean;
}

/** What a command may set on a device: the comfort floor's range, °C; the car's largest target, kWh. */
export interface CommandRangesView {
  floorC?: { min: number; max: number };
  targetKwhMax?: number;
}

export interface DeviceView {
  /** Config id: `[A-Za-z0-9_-]+`, used in topics and Home Assistant ids. */
  id: string;
  name: string;
  kind: DeviceKind;
  /** The ranges commands to the device are held to (absent where none applies). */
  ranges?: CommandRangesView;
  available: boolean;
  mode: DeviceMode;
  temperatureC?: number;
  powerW?: number;
  /** Cumulative imported energy (meter counter), kWh. */
  energyKwh?: number;
  /** Whether the plan has the device on in the current slot. */
  plannedOn: boolean;
  /** Start of the next planned on-slot, if any. */
  nextStartMs?: number;
  /** Tank comfort floor, °C (hot water tanks). */
  floorC?: number;
  /** The next comfort deadline within the plan (hot water tanks with comfort windows). */
  nextComfort?: ComfortView;
  /**
   * Set until the daemon's first reading of the device: its values are not known yet, so MQTT
   * keeps the retained values of the previous run instead of flapping to unknown at start.
   */
  notReadYet?: true;
  /** A heat pump's SG Ready state now, with the reason the control loop gave. */
  sgReady?: { state: SgStateView; reason: string };
  /** A heated zone: its preset, the band in effect now and its frost floor, °C; a thermostat's setpoint last written, °C. */
  zone?: {
    preset: 'comfort' | 'eco' | 'away' | 'boost';
    minC: number;
    maxC: number;
    frostC: number;
    /** What the zone aims at now: a thermostat's setpoint, else the comfort target (the middle of the band), °C. */
    targetC: number;
    setpointC?: number;
  };
  /** Set while the heater is blocked by a relay that cannot end the block itself (no device lease). */
  blockWithoutLease?: true;
  /** Power-limitation (LPC) cap on this device now, kW, and when it ends. */
  capKw?: number;
  capUntilMs?: number;
  ev?: EvView;
  /** The charging current the control last set, A (chargers). */
  currentLimitA?: number;
  /** Whether that current is held down by the main fuse (chargers, with `site.fuse`). */
  fuseLimited?: boolean;
  /** Current per line L1.., A, from a meter that gives them (the HAN reader); NaN: not measured. */
  phaseCurrentsA?: number[];
}

/** The main fuse (`site.fuse`) as the control sees it now. */
export interface FuseView {
  mainFuseA: number;
  /** Fuse less the measured current, per line, A; null: not measured or no fresh reading. */
  headroomA: (number | null)[];
  /** Whether the fuse holds a charger below what it was asked for. */
  limiting: boolean;
  /** The control's reason for the fuse-held charger, e.g. `main fuse 25 A: L1 at 24.0 A`. */
  reason?: string;
}

/** One power-limitation (LPC) cap, active now or coming, on the location or on one device. */
export interface LimitView {
  eventId: string;
  /** Null for a cap on the whole location. */
  deviceId: string | null;
  capKw: number;
  startMs: number;
  endMs: number;
  active: boolean;
}

/** An event that shapes prices or caps now or later. */
export interface EventView {
  /** The API's event id: for the partner's support, not for the user to read. */
  id: string;
  /** `PriceCurve`, `LocationLPC`, `ResourceLPC`, ... as the API names it. */
  type: string;
  startMs: number | null;
  endMs: number | null;
  /** A power-limitation event: its lowest and highest cap on this home, kW. */
  capKw?: { min: number; max: number };
  /** The devices of this home it caps (absent: the whole home). */
  deviceIds?: string[];
  /** A price-curve event: its lowest and highest incentive delta (negative: a reward), per `unit` (`NOK/kWh`). */
  priceDelta?: { min: number; max: number; unit: string };
}

export interface PlanSlotDeviceView {
  powerKw: number;
  on: boolean;
  /** Forecast tank temperature at the end of the slot. */
  temperatureC?: number;
  energyStateKwh?: number;
}

export interface PlanSlotView {
  startMs: number;
  /** Total price (spot + delta + fees), currency per kWh. */
  pricePerKwh: number;
  /** Incentive delta of the price-curve events, currency per kWh (negative = reward). */
  deltaPerKwh: number;
  /** Why the planner chose what it chose in this slot, as the planner says it (prices, ranks, binding constraints). */
  reason?: string;
  /** The same in the user's words (app-view-why.ts). */
  why?: string;
  devices: Record<string, PlanSlotDeviceView>;
}

export interface PlanView {
  /** When the planner made this plan. */
  createdMs: number;
  /** `optimal`: priced; `fallback`: no prices known (the documented default behaviour). */
  mode: 'optimal' | 'fallback';
  slotMinutes: number;
  slots: PlanSlotView[];
  expectedCost: number;
  baselineCost: number;
  incentive: number;
  currency: string;
  shortfalls: string[];
  /** The next comfort deadline within the plan, if the tank has comfort windows. */
  nextComfort?: ComfortView;
  /** What the car's charging need rests on, in words (absent without a car in the plan). */
  evNeed?: string;
  /** How the base load was forecast, in words, when it was learned (absent: the smoothed base load). */
  baseLoad?: string;
  /** LPC reservations the plan was given that have not ended (absent: none). */
  reservations?: ReservationView[];
  /** Each heated zone in words: its room model, its start temperature and the outdoor temperatures' source (absent: no zones). */
  zones?: string[];
}

/** A reserved (probable) location cap and what the plan did about it. */
export interface ReservationView {
  eventId: string;
  startMs: number;
  endMs: number;
  maxKw: number;
  /** False: keeping it would have left a need short, so the plan does without it. */
  kept: boolean;
  /** Tank and car energy planned inside the window, and from the plan's start to the window. */
  insideKwh: number;
  beforeKwh: number;
}

export interface PriceView {
  currency: string;
  /** What the slot costs per kWh: spot, fees, tax and VAT, with the incentive delta. */
  totalPerKwh: number;
  /** The day-ahead spot price excluding VAT; null for a plan stored without it. */
  spotPerKwh: number | null;
  deltaPerKwh: number;
  source: string;
}

export interface JobHealthView {
  name: string;
  ok: boolean;
  lastError?: { code: string; message: string; atMs: number };
}

/** This month's bill so far at the main meter (priced hours plus the capacity step), VAT included where named. */
export interface BillView {
  /** Local month, `YYYY-MM`. */
  month: string;
  /** When the local month began: the sums start again from 0 then. */
  monthStartMs: number;
  currency: string;
  kwh: number;
  /** Energy (spot + markup, or the fixed price), excluding VAT. */
  energy: number;
  gridFee: number;
  tax: number;
  /** Money back from the household subsidy, excluding VAT. */
  subsidy: number;
  vat: number;
  /** Incentive deltas of the programme's events (negative = earned). */
  incentive: number;
  /** What the month costs so far, VAT and the capacity fee included. */
  total: number;
  hoursPriced: number;
  /** Metered hours left out of the sums (no real price known for them). */
  hoursUnpriced: number;
  /** The capacity step the month's metered peaks reach, with its fee incl. VAT; null without a capacity fee. */
  capacity: { measureKw: number; stepUpToKw: number | null; marginKw: number | null; fee: number } | null;
  /**
   * The same priced hours without wattshift: `total` incl. VAT and the capacity fee its peaks reach
   * (`capacityFee`, incl. VAT); hours no stored plan covered count at their realised cost.
   */
  baseline: { total: number; capacityFee: number; hoursFromPlan: number; hoursWithoutPlan: number };
  /** `baseline.total − total` (negative: wattshift cost more). */
  savings: number;
  devices: { id: string; kwh: number; total: number }[];
}

/** A plan report the API accepted (docs/flexibility.md): its hours and their sums, kWh. */
export interface PlanReportView {
  acceptedMs: number;
  /** Why it was sent: `first`, `changed`, `extended` or `daily`. */
  reason: string;
  /** Start of its first hour and end of its last. */
  fromMs: number;
  toMs: number;
  hours: number;
  baselineKwh: number;
  flexibilityKwh: number;
}

export interface HomeView {
  location: { id: string; name: string; powerW?: number; limitKw: number; lpcCapKw?: number; fuse?: FuseView };
  price: PriceView | null;
  devices: DeviceView[];
  plan: PlanView | null;
  health: { ok: boolean; jobs: JobHealthView[] };
  /**
   * Usage reports by state; `pending` counts those being sent too. The plan report (not counted
   * there): the last one the API accepted, and whether a newer one waits to be sent.
   */
  outbox: {
    pending: number;
    accepted: number;
    rejected: number;
    oldestDeadlineMs?: number;
    lastPlanReport?: PlanReportView;
    planReportPending?: boolean;
  };
  /** Caps active now or coming, soonest first. */
  limits: LimitView[];
  /** Events that apply now or later, soonest first. */
  events: EventView[];
  /** Null before the first hour is priced, or without a main meter. */
  bill?: BillView | null;
  nowMs: number;
}

/** Device ids must be safe as one MQTT topic level and as a Home Assistant object id. */
export const deviceIdPattern = /^[A-Za-z0-9_-]{1,64}$/;
