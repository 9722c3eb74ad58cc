/** `wattshift run --config FILE`: the daemon. */
import { pino } from 'pino';
import { buildApp } from '../app.js';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { createLogger, logFormats, prettyDestination, stdoutIsJournal } from '../log.js';
import { simClockFromEnv } from '../clock.js';
import { logError, runDaemon } from './daemon.js';
import { exitCodeFor, exitCodes } from './exit-codes.js';
import { formatError } from './format-error.js';
import { configPathOf } from './args.js';
import { machineChecks } from './config-checks.js';
import type { CliCommand } from './types.js';

export const runCommand: CliCommand = {
  name: 'run',
  summary: 'run the daemon (logs on stdout)',
  usage: '--config FILE [--log-format json|pretty|journald]',
  options: { config: { type: 'string', short: 'c' }, 'log-format': { type: 'string' } },
  help: [
    'Logs: JSON lines; under systemd with stdout on the journal, each line carries its syslog',
    'priority (journalctl -p warning works); --log-format pretty prints for people.',
    'Stops gracefully on SIGTERM or SIGINT within 10 s; a second signal exits at once.',
    'Exit codes: 0 clean stop, 1 runtime failure, 78 invalid config or rejected credentials,',
    '130/143 second SIGINT/SIGTERM.',
  ],
  async run(args, io) {
    const path = configPathOf(args, io, 'run');
    if (path === null) return exitCodes.usage;
    const format = args.values['log-format'] ?? (stdoutIsJournal(io.env) ? 'journald' : 'json');
    if (typeof format !== 'string' || !(logFormats as readonly string[]).includes(format)) {
      io.stderr(`wattshift run: --log-format must be one of ${logFormats.join(', ')}`);
      return exitCodes.usage;
    }
    let loaded: LoadedConfig;
    try {
      loaded = loadConfig(path, io.env, { machineChecks });
    } catch (err) {
      for (const line of formatError(err)) io.stderr(line);
      return exitCodeFor(err);
    }
    const { config, secrets, warnings } = loaded;
    // Synchronous stdout: no line is lost when the process exits right after a failure.
    const destination = format === 'pretty' ? await prettyDestination() : pino.destination({ dest: 1, sync: true });
    const logger = createLogger({ level: config.log.level, secrets, destination, format: format === 'journald' ? 'journald' : 'json' });
    // Secrets are redacted by key and masked by value (createLogger's `secrets`).
    logger.debug({ component: 'config', config }, 'config loaded');
    for (const w of warnings) logger.warn({ component: 'config' }, w);
    let code: number;
    try {
      // Simulated time for the demo and end-to-end tests only; production never sets it.
      const sim = simClockFromEnv(io.env);
      // Plans run on the long-lived planner thread (from the bundle; under tsx on the main thread),
      // so a long plan never delays device I/O: docs/performance.md has its cost.
      const app = buildApp(
        config,
        sim
          ? { logger, clock: sim.clock, controlTickMs: 60_000, deviceTimeoutMs: 2_000 * sim.speed, planInWorker: true }
          : { logger, planInWorker: true },
      );
      if (sim) logger.warn({ speed: sim.speed }, 'running on a simulated clock (WATTSHIFT_SIM_CLOCK)');
      code = await runDaemon(app, { logger, signals: io.signals });
    } catch (err) {
      logError(logger, err, 'stopped');
      code = exitCodeFor(err);
    }
    if (code !== exitCodes.ok) io.stderr(`wattshift: stopped with exit code ${code}`);
    return code;
  },
};
