/**
 * The parts of OCPP 1.6J messages the central system reads, parsed with zod (ocpp-rpc's strict
 * mode has already checked them against the specification's JSON schemas; these give them types
 * and keep unknown fields). Section numbers refer to the OCPP 1.6 specification (edition 2).
 */
import { z } from 'zod';

/** §7.7 ChargePointStatus. */
export const chargePointStatuses = [
  'Available',
  'Preparing',
  'Charging',
  'SuspendedEVSE',
  'SuspendedEV',
  'Finishing',
  'Reserved',
  'Unavailable',
  'Faulted',
] as const;
export type ChargePointStatus = (typeof chargePointStatuses)[number];

/** §4.9 StatusNotification.req. */
export const statusNotificationSchema = z.looseObject({
  connectorId: z.number().int().min(0),
  status: z.enum(chargePointStatuses),
  errorCode: z.string(),
  vendorErrorCode: z.string().optional(),
});

/** The SampledValue type (§7): measurand defaults to Energy.Active.Import.Register, unit to Wh. */
const sampledValueSchema = z.looseObject({
  value: z.string(),
  measurand: z.string().default('Energy.Active.Import.Register'),
  unit: z.string().optional(),
  phase: z.string().optional(),
});

/** §4.7 MeterValues.req. */
export const meterValuesSchema = z.looseObject({
  connectorId: z.number().int().min(0),
  transactionId: z.number().int().optional(),
  meterValue: z.array(z.looseObject({ timestamp: z.string(), sampledValue: z.array(sampledValueSchema) })),
});

/** §4.8 StartTransaction.req. */
export const startTransactionSchema = z.looseObject({
  connectorId: z.number().int().min(1),
  idTag: z.string(),
  meterStart: z.number().int(),
});

/** §4.1 Authorize.req. */
export const authorizeSchema = z.looseObject({ idTag: z.string().min(1).max(20) });

/** §4.10 StopTransaction.req. */
export const stopTransactionSchema = z.looseObject({
  transactionId: z.number().int(),
  meterStop: z.number().int(),
});

/** The answer status of SetChargingProfile, ClearChargingProfile, RemoteStart/Stop, ChangeConfiguration, TriggerMessage. */
export const statusAnswerSchema = z.looseObject({ status: z.string() });

export interface MeterReading {
  energyWh?: number;
  powerW?: number;
}

const energyScale: Record<string, number> = { Wh: 1, kWh: 1000 };
const powerScale: Record<string, number> = { W: 1, kW: 1000 };

/**
 * The total (phase-less) active import energy and power of the latest meterValue, in Wh and W.
 * Values that are not numbers or carry a unit we do not know are left out.
 */
export function readMeterValues(meterValue: z.infer<typeof meterValuesSchema>['meterValue']): MeterReading {
  const out: MeterReading = {};
  for (const mv of meterValue) {
    for (const sv of mv.sampledValue) {
      if (sv.phase !== undefined) continue;
      const n = Number(sv.value);
      if (sv.value.trim() === '' || !Number.isFinite(n)) continue;
      if (sv.measurand === 'Energy.Active.Import.Register') {
        const k = energyScale[sv.unit ?? 'Wh'];
        if (k !== undefined) out.energyWh = n * k;
      } else if (sv.measurand === 'Power.Active.Import') {
        const k = powerScale[sv.unit ?? 'W'];
        if (k !== undefined) out.powerW = n * k;
      }
    }
  }
  return out;
}
