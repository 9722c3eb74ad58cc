/**
 * The commands of the other products: the partner's fleet hub, and the sandbox, simulators and
 * demo. Each is a bundle of its own (dist/hub.js, dist/sim.js: scripts/build.mjs points the two
 * imports below at them) that the gateway's bundle loads only when one of its commands runs, so
 * the gateway carries none of their code and a package may leave a part out.
 */
import { WattshiftError } from '../errors.js';
import type { PartEntry } from './part-entry.js';
import type { CliCommand, CliIo, CommandArgs, CommandInfo } from './types.js';

/** Each part: what it is, its bundle, and the Debian package that carries it (scripts/package-deb.sh). */
const parts: Record<'hub' | 'sim', { what: string; file: string; debianPackage: string; load: () => Promise<PartEntry> }> = {
  hub: { what: 'the fleet hub', file: 'dist/hub.js', debianPackage: 'wattshift-hub', load: () => import('./hub-part.js') },
  sim: { what: 'the sandbox, simulators and demo', file: 'dist/sim.js', debianPackage: 'wattshift-sim', load: () => import('./sim-part.js') },
};

/** Loads the part and runs one of its commands; a part missing from the install is PART_NOT_INSTALLED. */
async function runInPart(part: keyof typeof parts, command: string, args: CommandArgs, io: CliIo): Promise<number> {
  const { what, file, debianPackage, load } = parts[part];
  let entry: PartEntry;
  try {
    entry = await load();
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new WattshiftError(
      'PART_NOT_INSTALLED',
      `\`wattshift ${command}\` is not installed here: ${what} ships apart from the gateway, in the ${debianPackage} package (${file}; ${(err as Error).message})`,
    );
  }
  return entry.runPartCommand(command, args, io);
}

/** The command whose work is in the part's bundle. */
export function inPart(part: keyof typeof parts, info: CommandInfo): CliCommand {
  return { ...info, run: (args, io) => runInPart(part, info.name, args, io) };
}
