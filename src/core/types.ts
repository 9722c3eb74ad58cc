/**
 * Public types of the pure planner: price inputs and slots, device models, plan input and
 * output. Plain data only (no classes), so plans serialise to JSON as they are.
 *
 * Units are in the names: `Ms` = milliseconds since the Unix epoch (UTC), `Kw`, `Kwh`, `C`
 * (degrees Celsius). Prices are in the plan's currency per kWh unless a name says otherwise.
 */

// ---------------------------------------------------------------------------------------------
// Prices

/** Where a slot's spot price came from, best first. */
export type PriceSource = 'actual' | 'forecast' | 'nordPool' | 'adviceOnly' | 'fallback';

/** Currency and energy unit of a price input. */
export interface PriceUnits {
  /** ISO 4217 code, e.g. `EUR`, `NOK`. */
  currency: string;
  energyUnit: 'kWh' | 'MWh';
  /**
   * VAT multiplier already contained in the prices (e.g. 1.25); it is divided out so that VAT
   * is applied once, as configured in {@link PriceFees}. Default 1 (no VAT included).
   */
  vatIncluded?: number;
}

/** Prices at a fixed resolution, each point valid from `startMs` for `resolutionMinutes`. */
export interface PricePointsInput {
  units: PriceUnits;
  resolutionMinutes: number;
  points: ReadonlyArray<{ startMs: number; price: number }>;
}

/** Forecast segments (e.g. 6-hour averages); each spreads evenly over the hours it covers. */
export interface ForecastInput {
  units: PriceUnits;
  segments: ReadonlyArray<{ fromMs: number; toMs: number; averagePrice: number }>;
  /**
   * When true, `toMs` is the start of the segment's last hour (the forecast service's
   * documented convention) and one hour is added to get the exclusive end. Default false:
   * `toMs` is exclusive.
   */
  toIsLastHourStart?: boolean;
}

/** The incentive curve of one price-curve event (added to the spot price where it covers a slot). */
export interface DeltaCurveInput {
  units: PriceUnits;
  resolutionMinutes: number;
  points: ReadonlyArray<{ startMs: number; price: number }>;
}

/** Configured fees, in the series currency per kWh, excluding VAT. */
export interface PriceFees {
  gridFeePerKwh: number;
  taxPerKwh: number;
  /** VAT multiplier applied to spot + grid fee + tax (1.25 = 25 %). Default 1. */
  vatRate?: number;
  /** Apply VAT to the incentive delta too. Default false (an incentive is paid as is). */
  vatOnDelta?: boolean;
}

/** Input of {@link buildPriceSeries}. */
export interface BuildPriceSeriesInput {
  slotMinutes: 15 | 60;
  /** Start of the series; floored to a slot boundary (UTC). */
  fromMs: number;
  /** End of the series (exclusive); ceiled to a slot boundary (UTC). */
  toMs: number;
  /** IANA zone of the location (kept on the slots' consumers; slots themselves are UTC). */
  timezone: string;
  /** Currency of the series; every input is converted to it per kWh. */
  currency: string;
  spot: {
    actual?: PricePointsInput;
    forecast?: ForecastInput;
    /** Advice segments of the forecast service, used only where no forecast covers a slot. */
    advice?: ForecastInput;
    /** Nord Pool's published day-ahead prices: after the forecast (default) or, with `nordPoolFirst`, before it. */
    nordPool?: PricePointsInput;
    nordPoolFirst?: boolean;
    /** Spot price for slots no input covers (series currency per kWh). Default 0. */
    fallbackPricePerKwh?: number;
  };
  deltas: ReadonlyArray<DeltaCurveInput>;
  fees: PriceFees;
  /** Series-currency units per one unit of the keyed currency, e.g. `{ EUR: 11.6 }` for NOK. */
  exchangeRates?: Readonly<Record<string, number>>;
}

/** One price slot. All money values are in the series currency per kWh. */
export interface PriceSlot {
  startMs: number;
  endMs: number;
  /** Spot price excluding VAT. */
  spot: number;
  /** Sum of the incentive deltas covering the slot (time-weighted), excluding VAT. */
  delta: number;
  /** Grid fee + tax, excluding VAT. */
  fees: number;
  /** What the planner minimises: (spot + fees)·VAT + delta (·VAT if configured). */
  price: number;
  source: PriceSource;
  /** Per-kWh cost by component, when a tariff priced the slot. */
  components?: SlotCostComponents;
}

/** What one kWh in a slot costs, by component (series currency per kWh). */
export interface SlotCostComponents {
  /** Spot + supplier markup, or the fixed price; excluding VAT. */
  energy: number;
  gridFee: number;
  /** Name of the grid period that priced the slot (`default` when none matched). */
  gridPeriod: string;
  tax: number;
  /** Refund by the household subsidy (positive = money back), excluding VAT. */
  subsidy: number;
  /** VAT on energy + grid fee + tax − subsidy. */
  vat: number;
  /** The programme's incentive delta, as paid (no VAT). */
  delta: number;
  /** What the household pays for one kWh: energy + gridFee + tax − subsidy + vat + delta. */
  total: number;
}

// ---------------------------------------------------------------------------------------------
// Devices and location

/** Anti-cycling limits of one device. Slots are the plan's slots. */
export interface AntiCycling {
  /** Minimum number of consecutive "on" slots once started (default 1). */
  minOnSlots?: number;
  /** Minimum number of consecutive "off" slots between runs (default 1). */
  minOffSlots?: number;
  /** Maximum starts per local day (default unlimited). */
  maxStartsPerDay?: number;
}

/** Legionella rule: reach at least `tempC` once every `everyDays`, never skipped. */
export interface LegionellaRule {
  tempC: number;
  everyDays: number;
  /** When the tank last reached `tempC`; null or absent = unknown (treated as overdue). */
  lastReachedMs?: number | null;
  /** When overdue, the cycle must happen within this many hours. Default 24. */
  overdueWithinHours?: number;
}

/**
 * "Hot water ready": the tank holds at least `tempC` at `atMs` (one occurrence of a user's comfort
 * schedule). Planned at the end of the last slot that ends by `atMs`.
 */
export interface ComfortDeadline {
  atMs: number;
  tempC: number;
  /** What the user calls it, e.g. "hot water ready by 06:30"; shown in reasons and shortfalls. */
  label: string;
}

/** Electric hot water tank, one-node energy model. */
export interface TankParams {
  /** The device's id; keys its slots and outcome in the plan. Default `tank`. */
  id?: string;
  volumeL: number;
  /** Element power. */
  powerKw: number;
  coldWaterC: number;
  ambientC: number;
  /** Heat-loss coefficient UA, W/K (≈ 1.6 for a 200 L tank). */
  heatLossWPerK: number;
  /** Comfort floor, never crossed because of the plan. */
  minC: number;
  /** Thermostat setting; the element stops there. */
  maxC: number;
  /** Hot-water draw energy per local hour 0..23, kWh. Default {@link defaultDrawProfileKwh}. */
  drawProfileKwh?: ReadonlyArray<number>;
  /** Measured temperature; null/absent when there is no (valid) sensor. */
  currentTempC?: number | null;
  /**
   * Last known temperature and time, used with {@link TankParams.heatedSinceKwh} to estimate the
   * current temperature from the energy balance when there is no measurement.
   */
  lastKnown?: { tempC: number; atMs: number } | null;
  /** Energy metered into the element since `lastKnown.atMs`. Default 0. */
  heatedSinceKwh?: number;
  /**
   * Energy the heater already took in the slot that contains `nowMs`, before `nowMs`, kWh. A plan
   * made mid-slot gives that slot's energy for the whole slot (this plus what is still to come), so
   * the controller compares it with energy metered since the slot started. Default 0.
   */
  slotDeliveredKwh?: number;
  /**
   * `continuous`: the controller can stop the heater mid-slot once the slot's planned energy is
   * metered (any energy 0..P·Δt per slot). `relay`: whole-slot on/off only.
   */
  control: 'continuous' | 'relay';
  legionella?: LegionellaRule | null;
  antiCycling?: AntiCycling | null;
  /** Comfort deadlines; those outside the plan's slots are ignored. */
  comfort?: ReadonlyArray<ComfortDeadline>;
}

/** EV charger with a connected (or expected) car. */
export interface EvParams {
  /** The charger's id; keys its slots and outcome in the plan. Default `ev`. */
  id?: string;
  /** Energy to put into the battery. Alternatively give `socPct`, `targetSocPct` and `capacityKwh`. */
  energyNeededKwh?: number;
  socPct?: number;
  targetSocPct?: number;
  capacityKwh?: number;
  /** Extra battery energy the car may take in negative-price slots. Default 0. */
  maxExtraKwh?: number;
  departureMs: number;
  /** When the car arrives; absent = connected now. */
  arrivalMs?: number;
  /** Minimum charging power (e.g. 6 A × phases × voltage, see `evPowerKw`); 0 allows any power. */
  minPowerKw: number;
  maxPowerKw: number;
  /** Battery energy per grid energy (0.85–0.95). */
  efficiency: number;
  antiCycling?: AntiCycling | null;
  /** Energy already charged in the slot that contains `nowMs`, kWh (see `TankParams.slotDeliveredKwh`). */
  slotDeliveredKwh?: number;
  /**
   * When the car was plugged in, and the grid energy it has taken since, kWh: the session the
   * slots' `baselineKwh` accounts for. The naive car charges at full power from this moment, so
   * every plan of one session states the same baseline for an hour.
   */
  session?: { startMs: number; deliveredKwh: number };
}

/**
 * A heated room or zone: a first-order thermal model, heat capacity C and heat loss UA, so that
 * C·dT/dt = cop·P + gains − UA·(T − T_out). Planned like a tank whose "ambient" is the outdoor
 * temperature of each slot and whose floor is the comfort band's lower edge of each slot.
 */
export interface ZoneParams {
  /** The zone's id; keys its slots and outcome in the plan. */
  id: string;
  /** The heater's electric power when on, kW. */
  powerKw: number;
  /** Heat delivered per electric kWh: 1 for a panel heater or floor heating cable, a heat pump's COP. Default 1. */
  cop?: number;
  /** `relay`: whole-slot on/off; `continuous`: any energy 0..P·Δt per slot (a thermostat the controller moves). */
  control: 'continuous' | 'relay';
  /** The room model the plan uses (learned or the documented defaults). */
  model: RoomModelParams;
  /** Measured room temperature now, °C; null when there is no valid reading (the plan then assumes the band's lower edge). */
  currentTempC: number | null;
  /** Outdoor temperature per slot of the plan (same index as `PlanInput.slots`), °C. */
  outdoorTempC: ReadonlyArray<number>;
  /** Where `outdoorTempC` came from (see `OutdoorForecast.source`); the plan's outcome repeats it. */
  outdoorSource?: OutdoorForecast['source'];
  /** Free heat (people, appliances, sun) per slot, kW: one value for all slots or one per slot. Default 0. */
  gainsKw?: number | ReadonlyArray<number>;
  /** Comfort band per slot (same index as `PlanInput.slots`), °C: the plan keeps the room within it. */
  band: ReadonlyArray<{ minC: number; maxC: number }>;
  /** Frost floor, °C: the room is never planned or held below it, whatever the price. */
  frostC: number;
  antiCycling?: AntiCycling | null;
  /** Energy the heater already took in the slot that contains `nowMs`, kWh (see `TankParams.slotDeliveredKwh`). */
  slotDeliveredKwh?: number;
}

/** A room's first-order thermal model. */
export interface RoomModelParams {
  /** Heat capacity of the room's air, furniture and inner surfaces, kWh/K. */
  heatCapacityKwhPerK: number;
  /** Heat loss to outdoors (UA), kW/K. */
  heatLossKwPerK: number;
  /** Standard deviation of the model's one-hour temperature prediction, K (what the plan's temperatures may be off by). */
  errorK: number;
  /** `learned` from this room's metered history, or the documented `default` until there is enough of it. */
  source: 'learned' | 'default';
}

/** An outdoor temperature forecast, hourly points from `startMs`; `source` says where it came from. */
export interface OutdoorForecast {
  /** `metno`: MET Norway's Locationforecast; `persistence`: the last measured or forecast value held; `none`: nothing known. */
  source: 'metno' | 'persistence' | 'none';
  points: ReadonlyArray<{ startMs: number; tempC: number }>;
  /** When the forecast was made or last confirmed by its source. */
  updatedMs: number | null;
}

/** A power cap from a power-limitation (LPC) event, hard, per slot it overlaps. */
export interface LpcCap {
  startMs: number;
  endMs: number;
  maxKw: number;
  /** `location`: caps the whole location including base load; `tank`/`ev`/`zone`: a device of that kind. */
  scope: 'location' | 'tank' | 'ev' | 'zone';
  /** With a `tank`/`ev`/`zone` scope: the one device it caps (absent: every device of the kind). */
  deviceId?: string;
  /**
   * The `LPCReservation` event this cap comes from: a cap the partner may ask for, planned for as
   * if asked but never acknowledged (absent: an LPC event's cap).
   */
  reservationId?: string;
}

export interface LocationParams {
  /** Main fuse / contracted limit for the whole location. */
  limitKw: number;
  /** Base load forecast, kW: one value for all slots, or one per slot of `PlanInput.slots` (same index). */
  baseLoadKw: number | ReadonlyArray<number>;
  lpc?: ReadonlyArray<LpcCap>;
}

export interface PlanOptions {
  /** Slots after the current one kept from the previous plan. Default 1. */
  frozenSlots?: number;
  /** EV fallback window (local hours, start inclusive, end exclusive, may wrap). Default 22–6. */
  evFallbackWindow?: { startHour: number; endHour: number };
  /** Energy grid of the on/off dynamic programme, kWh. Default 0.01. */
  energyStepKwh?: number;
}

/** What the pair planner needs: one tank and one car at most. Slots must be contiguous, equal length, UTC-aligned. */
export interface PlanInput {
  slots: ReadonlyArray<PriceSlot>;
  timezone: string;
  currency: string;
  tank?: TankParams | null;
  ev?: EvParams | null;
  location: LocationParams;
  options?: PlanOptions;
}

/** A home with any number of tanks and cars, planned jointly (`planHome`); each device has its `id`. */
export interface HomePlanInput extends Omit<PlanInput, 'tank' | 'ev'> {
  tanks: ReadonlyArray<TankParams & { id: string }>;
  evs: ReadonlyArray<EvParams & { id: string }>;
  /** Heated rooms or zones (absent: none). */
  zones?: ReadonlyArray<ZoneParams>;
}

// ---------------------------------------------------------------------------------------------
// Plan output

export type BindingConstraint =
  | 'locationLimit'
  | 'lpc'
  /** A reserved (probable) LPC cap, see `LpcCap.reservationId`. */
  | 'reservedLpc'
  | 'tankFloor'
  | 'tankMax'
  | 'tankPower'
  | 'legionella'
  | 'comfort'
  | 'evDeadline'
  | 'evPower'
  | 'antiCycling'
  | 'frozen'
  | 'fallback'
  | 'capacityStep';

export interface DeviceSlotPlan {
  /**
   * Energy for the whole slot, kWh. In the slot a plan is made in, this includes what was metered
   * before the plan (`slotDeliveredKwh`), so a re-plan never moves the controller's target.
   */
  energyKwh: number;
  /** Average power over the rest of the slot (the whole slot unless the plan was made inside it). */
  powerKw: number;
  on: boolean;
}

export interface TankSlotPlan extends DeviceSlotPlan {
  /** Expected temperature at the end of the slot. */
  endTempC: number;
  /**
   * What control adds to `energyKwh` in this slot (> 0: a paid-to-consume slot, where it heats on
   * to maxC), or what the tank's thermostat cuts from it because of such heat (< 0), by the plan's
   * tank model; counted in the plan's cost. Absent when zero.
   */
  runOnKwh?: number;
}

export interface EvSlotPlan extends DeviceSlotPlan {
  /** Battery energy added since the start of the plan, at the end of the slot. */
  chargedKwh: number;
  /** The car leaves within this slot, at this time: its energy is due by then, not by the slot's end. */
  leavesMs?: number;
}

export interface ZoneSlotPlan extends DeviceSlotPlan {
  /** Expected room temperature at the end of the slot, °C. */
  endTempC: number;
  /** The comfort band the plan held the room to in this slot, °C. */
  minC: number;
  maxC: number;
}

export interface PlanSlot {
  startMs: number;
  endMs: number;
  /** What the planner minimises per kWh (PriceSlot.price). */
  price: number;
  /** The day-ahead spot price, excluding VAT, fees and deltas (PriceSlot.spot). */
  spot: number;
  delta: number;
  source: PriceSource;
  /** Power available to the flexible loads (limit and location LPC minus base load). */
  headroomKw: number;
  /** Each tank's plan for the slot, by device id. */
  tanks?: Record<string, TankSlotPlan>;
  /** Each car's plan for the slot, by charger id. */
  evs?: Record<string, EvSlotPlan>;
  /** Each heated zone's plan for the slot, by zone id. */
  zones?: Record<string, ZoneSlotPlan>;
  binding: BindingConstraint[];
  /** Short human explanation ("why this slot"). */
  reason: string;
  /** Most energy the location may take in this slot's UTC hour (kWh), when the plan holds the hour to the month's capacity step. */
  hourAllowanceKwh?: number;
  /** Flexible energy (tank + car) the naive baseline takes in this slot, kWh: what the bill's savings are measured against. */
  baselineKwh?: number;
  /** Each naive tank of that baseline, by device id: its energy in the slot and its temperature at the slot's end (carried to the next plan). */
  baselineTanks?: Record<string, { energyKwh: number; endTempC: number }>;
}

export interface Shortfall {
  device: 'tank' | 'ev' | 'zone' | 'location';
  /** The tank or charger it concerns, by id (absent for the location). */
  deviceId?: string;
  kind: 'belowFloor' | 'belowBand' | 'belowFrost' | 'legionella' | 'comfort' | 'evTarget' | 'baseLoadOverCap';
  /** First affected slot start. */
  atMs: number;
  /** Missing energy (kWh) or temperature (K), see `message`. */
  amount: number;
  message: string;
}

export interface ComfortOutcome extends ComfortDeadline {
  /** End of the slot the temperature is planned at (the last slot ending by `atMs`). */
  slotEndMs: number;
  /** Expected temperature at `atMs`, from the planned one at `slotEndMs` less what is lost and drawn until then. */
  plannedTempC: number;
  met: boolean;
}

export interface TankOutcome {
  startTempC: number;
  /** Whether the start temperature is measured, estimated, or assumed (= floor). */
  tempSource: 'measured' | 'estimated' | 'assumed';
  /** Slot (start) at whose end the legionella temperature is planned, if any. */
  legionellaAtMs?: number | null;
  /** The comfort deadlines within the plan, soonest first, with the temperature planned for each. */
  comfort?: ComfortOutcome[];
}

export interface ZoneOutcome {
  startTempC: number;
  /** Whether the start temperature is measured or assumed (= the band's lower edge). */
  tempSource: 'measured' | 'assumed';
  /** The room model the plan used. */
  model: RoomModelParams;
  /** Where the outdoor temperatures the plan used came from (`ZoneParams.outdoorSource`). */
  outdoorSource?: OutdoorForecast['source'];
}

export interface EvOutcome {
  /** Battery energy the car needs by its departure. */
  energyNeededKwh: number;
  /** The departure the plan charges the car for (a command's, else the car's schedule's next). */
  departureMs: number;
  /** What the need rests on: a known state of charge, or the energy estimate. */
  needFrom: { socPct: number; targetSocPct: number; capacityKwh: number } | { estimateKwh: number };
  /** The car planned at this charger, when it is a configured vehicle (set by the daemon, not the planner). */
  vehicle?: { id: string; name: string; identifiedBy: string };
}

export interface Plan {
  createdMs: number;
  currency: string;
  slotMinutes: number;
  startMs: number;
  endMs: number;
  /** `optimal`: priced plan; `fallback`: no prices at all, documented default behaviour. */
  mode: 'optimal' | 'fallback';
  slots: PlanSlot[];
  /** Expected cost of the plan's flexible energy, including control's run-on (`runOnKwh`) (series currency). */
  cost: number;
  /** Cost of the naive baseline on the same prices (tank on thermostat, EV full power at arrival). */
  baselineCost: number;
  /** Whether the baseline itself keeps the location limit and LPC caps. */
  baselineRespectsLimits: boolean;
  /** Incentive earned: −Σ delta·energy (positive when consuming in negative-delta slots). */
  incentiveEarned: number;
  /** What the plan assumed and promises for each tank, by device id. */
  tanks?: Record<string, TankOutcome>;
  /** What each car needs, by charger id. */
  evs?: Record<string, EvOutcome>;
  /** What the plan assumed for each heated zone, by zone id. */
  zones?: Record<string, ZoneOutcome>;
  shortfalls: Shortfall[];
  /** The month's capacity fee as planned, when the tariff has one. */
  capacity?: CapacityOutcome;
  /** The reserved LPC caps the plan kept (absent: none), see `LpcCap.reservationId`. */
  reservations?: ReservationOutcome[];
  /** How the base load was forecast when it was learned (absent: the smoothed base load, one number for every slot). */
  baseLoad?: { source: 'learned'; note: string };
}

/** What the capacity fee looks like with the chosen plan (the current month; fees include VAT). */
export interface CapacityOutcome {
  /** The month's projected measure, kW (metered hours plus the plan's). */
  measureKw: number;
  /** Index into the tariff's steps, null for a fee per kW. */
  step: number | null;
  feePerMonth: number;
  /** Most energy a held hour may take (kWh/h), null when the plan was not held. */
  heldAtKwhPerH: number | null;
  /** Whole bill of the plan (its energy cost + the fee of every month it touches). */
  bill: number;
  /** The same for the unheld plan. */
  unheldBill: number;
}

/** A reservation as planned: its window and cap, and the flexible energy planned in and before it. */
export interface ReservationOutcome {
  eventId: string;
  startMs: number;
  endMs: number;
  /** The lowest reserved cap in the window, kW. */
  maxKw: number;
  /** False: keeping the cap would leave a comfort deadline, the floor or a departure short, so the plan does not keep it. */
  kept: boolean;
  /** Tank and car energy the plan takes inside the window, kWh. */
  insideKwh: number;
  /** Tank and car energy the plan takes from the plan's start to the window's start, kWh. */
  beforeKwh: number;
}
