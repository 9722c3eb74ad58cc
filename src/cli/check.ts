/** `wattshift check --config FILE`: validates the config and prints every problem. */
import { loadConfig } from '../config/load.js';
import { switchesWithoutLease } from '../devices/lease-warnings.js';
import { capHoldOfConfig } from '../devices/cap-hold.js';
import { exitCodeFor, exitCodes } from './exit-codes.js';
import { machineChecks } from './config-checks.js';
import { formatError, problemsOf } from './format-error.js';
import { configPathOf } from './args.js';
import type { CliCommand } from './types.js';

export const checkCommand: CliCommand = {
  name: 'check',
  summary: 'validate a config file and print every problem with its key path',
  usage: '--config FILE',
  options: { config: { type: 'string', short: 'c' } },
  help: [
    'Exit 0 when the config is valid (warnings are printed), 78 when it is not.',
    'Runs every check `run` makes before it connects: the schema, the cross-field rules (buses,',
    'MQTT topics, no output driven by two devices), the database directory, Modbus profiles and',
    'their points, TLS files. Outside systemd,',
    '{ credential } secrets cannot be read ($CREDENTIALS_DIRECTORY is unset): they are warned about.',
  ],
  async run(args, io) {
    const path = configPathOf(args, io, 'check');
    if (path === null) return exitCodes.usage;
    let loaded;
    try {
      loaded = loadConfig(path, io.env, { deferCredentials: true, machineChecks });
    } catch (err) {
      // Its own hint: the code's says to run `check`, which is what the user just did.
      const hint = problemsOf(err).length > 0 ? 'fix each key named above, then run check again' : undefined;
      for (const line of formatError(err, hint)) io.stderr(line);
      return exitCodeFor(err);
    }
    const warnings = [...loaded.warnings, ...switchesWithoutLease(loaded.config)];
    for (const w of warnings) io.stderr(`warning: ${w}`);
    io.stdout(
      `${path}: ok (${loaded.config.devices.length} device${loaded.config.devices.length === 1 ? '' : 's'}, ${warnings.length} warning${warnings.length === 1 ? '' : 's'})`,
    );
    // What each device holds of an LPC cap with wattshift gone: the acknowledgement rule follows it (docs/caps.md).
    for (const d of loaded.config.devices) {
      const hold = capHoldOfConfig(d);
      const caps =
        hold === undefined
          ? ''
          : hold.holdsMs === Number.POSITIVE_INFINITY
            ? `; holds any LPC cap by itself (${hold.why})`
            : hold.holdsMs > 0
              ? `; holds an LPC cap by itself up to ${Math.floor(hold.holdsMs / 3_600_000)} h (${hold.why})`
              : `; cannot hold an LPC cap by itself (${hold.why}): its caps are declined, and it counts at full power against location caps (docs/caps.md)`;
      io.stdout(`  ${d.id}: ${d.kind}${caps}`);
    }
    return exitCodes.ok;
  },
};
