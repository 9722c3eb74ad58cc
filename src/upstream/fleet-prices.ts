/**
 * A fleet gateway's price source: the last retained message of its price area (src/fleet/wire.ts).
 * The advice is always there once the hub has published; the hourly forecast and the actual spot
 * prices are offered to the price refresh only while the message carries them in this home's
 * currency, so the refresh plans on hourly prices exactly as a direct gateway does, and on the
 * advice alone otherwise (it skips parts a source does not offer).
 */
import { WattshiftError } from '../errors.js';
import type { FleetAdvice } from '../fleet/wire.js';
import type { PriceSource } from './port.js';
import type { Logger } from '../log.js';

export function fleetPriceSource(latest: () => FleetAdvice | null, site: { priceArea: string; currency: string }, logger: Logger): PriceSource {
  const log = logger.child({ component: 'fleet' });
  let mismatchLogged = false;

  /** A part of the message in this home's currency, or undefined (a mismatch is logged once). */
  function usable<T extends { priceUnits: { currency: string } }>(part: T | undefined): T | undefined {
    if (!part) return undefined;
    if (part.priceUnits.currency === site.currency) return part;
    if (!mismatchLogged) {
      log.warn(
        { code: 'FLEET_CURRENCY_MISMATCH', hub: part.priceUnits.currency, site: site.currency },
        'the hub sends prices in another currency; planning on the advice alone',
      );
      mismatchLogged = true;
    }
    return undefined;
  }

  return {
    advice: async () => {
      const m = latest();
      if (!m) throw new WattshiftError('FLEET_NO_ADVICE', `no price advice for ${site.priceArea} from the hub yet`);
      return m.advice;
    },
    get forecast() {
      const part = usable(latest()?.forecast);
      return part ? async () => part : undefined;
    },
    get actualPrices() {
      const part = usable(latest()?.actual);
      return part ? async () => part : undefined;
    },
  };
}
