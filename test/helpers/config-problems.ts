import { parseConfig, type ConfigProblem } from '../../src/config/load.js';
import { isWattshiftError } from '../../src/errors.js';

/** The problems a config document is refused with; none when it parses. */
export function problemsOf(document: unknown, env: Record<string, string>): ConfigProblem[] {
  try {
    parseConfig(document, { env });
  } catch (err) {
    if (isWattshiftError(err, 'CONFIG_INVALID')) return err.details?.problems as ConfigProblem[];
    throw err;
  }
  return [];
}

/** The secret the documents below name, as an environment variable. */
export const documentEnv = { CS: 'client-secret-from-env' };

/** The smallest valid document (an in-memory store, the secret from `documentEnv`), for tests to add to. */
export const minimalDocument = {
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
  spark: { clientId: 'c', clientSecret: { env: 'CS' } },
  storage: { path: ':memory:' },
};
