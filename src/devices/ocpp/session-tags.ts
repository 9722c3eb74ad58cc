/**
 * An OCPP charger's running transaction, kept in the store's key/value state with the car's tag
 * and the energy register at its start, so a restart of wattshift mid-session still knows which
 * car is plugged in and what the session has charged. Written once when a session starts and once
 * when it ends. A store that fails or holds something unreadable costs only that knowledge (the
 * car is planned with the charger's own model, the session counted from the restart), never the charger.
 */
import { z } from 'zod';
import type { Logger } from '../../log.js';
import type { Store } from '../../store/types.js';
import { toWattshiftError } from '../../errors.js';
import type { SessionTagMemory } from './ocpp-charger.js';

// OCPP 1.6 IdToken: CiString20Type; meterStart: an integer, Wh (§4.8).
const sessionSchema = z
  .strictObject({
    transactionId: z.number().int(),
    idTag: z.string().min(1).max(20).optional(),
    meterStartWh: z.number().int().optional(),
  })
  .nullable();

export function storedSessionTags(state: Pick<Store, 'getState' | 'setState'>, deviceId: string, logger: Logger): SessionTagMemory {
  const key = `ocpp-session:${deviceId}`;
  const failed =
    (what: string) =>
    (err: unknown): undefined => {
      const e = toWattshiftError(err, 'STORE_FAILED', `${deviceId}: ${what} the running session`);
      logger.warn(
        { code: e.code, device: deviceId, err: e.message },
        "the running OCPP session is not kept: after a restart the car is planned with the charger's own model and the session counted from then",
      );
      return undefined;
    };
  return {
    get: () => {
      try {
        return state.getState(key, sessionSchema) ?? undefined;
      } catch (err) {
        return failed('reading')(err);
      }
    },
    set: (session) => {
      try {
        state.setState(key, session ?? null);
      } catch (err) {
        failed('keeping')(err);
      }
    },
  };
}
