/**
 * The car's tag of an OCPP charger's running transaction, kept in the store's key/value state so a
 * restart of wattshift mid-session still knows which car is plugged in. Written once when a session
 * starts and once when it ends. A store that fails or holds something unreadable costs only the
 * name of the car (it is then planned with the charger's own model), never the charger.
 */
import { z } from 'zod';
import type { Logger } from '../../log.js';
import type { Store } from '../../store/types.js';
import { toWattshiftError } from '../../errors.js';
import type { SessionTagMemory } from './ocpp-charger.js';

// OCPP 1.6 IdToken: CiString20Type.
const sessionSchema = z.strictObject({ transactionId: z.number().int(), idTag: z.string().min(1).max(20) }).nullable();

export function storedSessionTags(state: Pick<Store, 'getState' | 'setState'>, deviceId: string, logger: Logger): SessionTagMemory {
  const key = `ocpp-session:${deviceId}`;
  const failed = (what: string) => (err: unknown): undefined => {
    const e = toWattshiftError(err, 'STORE_FAILED', `${deviceId}: ${what} the session's car tag`);
    logger.warn({ code: e.code, device: deviceId, err: e.message }, 'the car tag of the running OCPP session is not kept: after a restart the car is planned with the charger\'s own model');
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
