/**
 * `wattshift register --config FILE`: creates or updates the user, location and resources at the
 * API, enrolls the user, optionally registers the webhook, stores the ids, and prints what changed
 * with the eligibility and enrollment. Idempotent: a second run prints "already registered".
 */
import { systemClock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import { isWattshiftError, WattshiftError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { eligibilityStateKey, register, type EligibilityState } from '../registration.js';
import { createSparkClient, type SparkClient } from '../spark/client.js';
import { openStore } from '../store/index.js';
import { exitCodes } from './exit-codes.js';
import { configPathOf } from './args.js';
import type { CliCommand, CliIo } from './types.js';

/** Warnings and errors of the building blocks go to stderr as JSON lines; progress is printed by the command. */
export function cliLogger(io: Pick<CliIo, 'stderr'>, secrets: readonly string[] = [], level = 'warn'): Logger {
  return createLogger({ level, secrets, destination: { write: (line: string) => io.stderr(line.trimEnd()) } });
}

async function checkProgram(spark: SparkClient, userId: string, nowMs: number): Promise<EligibilityState> {
  const state: EligibilityState = { eligible: null, enrolled: null, checkedMs: nowMs, error: null };
  const errors: string[] = [];
  try {
    state.eligible = (await spark.getEligibility(userId)).isEligible;
  } catch (err) {
    if (isWattshiftError(err, 'AUTH_REJECTED')) throw err;
    errors.push(`eligibility: ${isWattshiftError(err) ? `${err.code}: ` : ''}${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    state.enrolled = (await spark.getEnrollment(userId)).isEnrolled ?? null;
  } catch (err) {
    if (isWattshiftError(err, 'AUTH_REJECTED')) throw err;
    errors.push(`enrollment: ${isWattshiftError(err) ? `${err.code}: ` : ''}${err instanceof Error ? err.message : String(err)}`);
  }
  if (errors.length > 0) state.error = errors.join('; ');
  return state;
}

const yesNo = (v: boolean | null, yes: string, no: string): string => (v === null ? 'unknown' : v ? yes : no);

export const registerCommand: CliCommand = {
  name: 'register',
  summary: 'create or update the user, location and resources at the API and enroll (idempotent)',
  usage: '--config FILE',
  options: { config: { type: 'string', short: 'c' } },
  help: [
    'Stores the ids in the database; running it again changes nothing.',
    'Exit codes: 0 registered, 1 API unreachable or failing, 78 invalid config or rejected credentials.',
  ],
  async run(args, io) {
    const path = configPathOf(args, io, 'register');
    if (path === null) return exitCodes.usage;
    const { config, secrets } = loadConfig(path, io.env);
    if (config.upstream.mode === 'fleet') {
      throw new WattshiftError(
        'CONFIG_INVALID',
        "upstream.mode is fleet: the partner's hub registers this home (it holds the API credentials); `wattshift register` is for direct mode",
      );
    }
    const logger = cliLogger(io, secrets);
    const clock = systemClock;
    const store = openStore({ path: config.storage.path, logger, clock });
    const spark = createSparkClient({ ...config.spark, clock, logger });
    try {
      let result;
      try {
        result = await register(config, { spark, store, logger, nowMs: clock.nowMs() });
      } catch (err) {
        if (isWattshiftError(err, 'API_UNAVAILABLE')) {
          throw new WattshiftError('API_UNAVAILABLE', `the Energy Coordination API at ${config.spark.baseUrl} is not reachable: ${err.message}`, {
            cause: err,
            ...(err.details ? { details: err.details } : {}),
          });
        }
        throw err;
      }
      const { registration, changes } = result;
      if (changes.length === 0) {
        io.stdout(`already registered at ${config.spark.baseUrl}: nothing changed`);
      } else {
        io.stdout(`registered at ${config.spark.baseUrl}:`);
        for (const c of changes) io.stdout(`  ${c}`);
      }
      io.stdout(`user       ${registration.userId}`);
      io.stdout(`location   ${registration.locationId}`);
      for (const [id, resource] of Object.entries(registration.resources)) {
        io.stdout(`resource   ${resource} (${config.vehicles.some((v) => v.id === id) ? 'vehicle' : 'device'} ${id})`);
      }
      io.stdout(`webhook    ${registration.webhookId ?? 'none'}`);
      const program = await checkProgram(spark, registration.userId, clock.nowMs());
      store.setState(eligibilityStateKey, program);
      io.stdout(
        `eligible   ${yesNo(program.eligible, 'yes', 'no (the API updates eligibility in batches; the daemon re-checks on each eligibility event)')}`,
      );
      io.stdout(`enrolled   ${yesNo(program.enrolled, 'yes', 'no')}`);
      if (program.error !== null) io.stderr(`warning: could not check the program status: ${program.error}`);
      return exitCodes.ok;
    } finally {
      store.close();
      await spark.close();
    }
  },
};
