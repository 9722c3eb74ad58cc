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
