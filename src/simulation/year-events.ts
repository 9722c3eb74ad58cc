/**
 * Posts a year's event (year-home.ts) to the API sandbox as a flexibility partner does: a cap as a
 * location LPC with a point an hour, a delta as a price curve on the home's tank, heat pump and
 * cars, in NOK per kWh.
 */
import type { Config } from '../config/schema.js';
import type { SparkClient } from '../spark/client.js';
import type { YearEvent } from './year-home.js';

const H = 3_600_000;

/** The hours of [fromMs, toMs) as ISO timestamps. */
const hoursOf = (fromMs: number, toMs: number): string[] =>
  Array.from({ length: Math.round((toMs - fromMs) / H) }, (_, i) => new Date(fromMs + i * H).toISOString());

/** Posts `e`; returns the event's id. */
export async function postYearEvent(partner: SparkClient, config: Config, resources: Record<string, string>, e: YearEvent): Promise<string> {
  const locationId = config.spark.locationId!;
  if (e.kind === 'cap') {
    const location = { locationId, meterPointId: config.spark.meterPointIds[0]! };
    const points = hoursOf(e.fromMs, e.toMs).map((timestamp) => ({ timestamp, maxPowerInKiloWatts: e.maxKw }));
    return (await partner.simulateLocationLpc({ locations: [{ location, points }] })).id;
  }
  const targets = ['tank', 'heatpump', 'car-a', 'car-b'].filter((id) => resources[id]).map((id) => ({ resourceId: resources[id]!, locationId }));
  const points = hoursOf(e.fromMs, e.toMs).map((timestamp) => ({ timestamp, price: e.deltaPerKwh }));
  const event = await partner.simulatePriceCurve({
    targets,
    priceCurveDelta: { points, currency: 'NOK', energyUnit: 'kWh', resolution: '01:00:00' },
    priceArea: 'NO4',
  });
  return event.id;
}
