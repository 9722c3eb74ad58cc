/**
 * The system's compiled tz database (`$TZDIR`, else /usr/share/zoneinfo; Debian's tzdata) as the
 * core's source of zone rules. Reading these small files instead of asking Intl keeps ICU's
 * locale data, about 8 MB, out of memory.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ZoneDataSource } from './core/zone-rules.js';

export const DEFAULT_ZONEINFO_DIR = '/usr/share/zoneinfo';

/** Zone names as tz spells them ("America/Port-au-Prince", "Etc/GMT+1"): no dots, so no "..". */
const zoneName = /^[A-Za-z0-9_+-]+(?:\/[A-Za-z0-9_+-]+)*$/;
/** Subtrees holding other builds of the same zones (with leap seconds, POSIX-only names), not zones. */
const notZones = /^(?:posix|right)\//;
/** Real TZif files are a few kB. */
const MAX_BYTES = 256 * 1024;

/** Reads `<dir>/<zone>`; undefined for a name that is not a zone's, a missing, odd or unreadable file. */
export function zoneinfoSource(env: NodeJS.ProcessEnv): ZoneDataSource {
  const dir = env.TZDIR || DEFAULT_ZONEINFO_DIR;
  return (zone) => {
    if (!zoneName.test(zone) || notZones.test(zone)) return undefined;
    const path = join(dir, zone);
    try {
      const stat = statSync(path);
      // Only regular files: reading a FIFO or a device would block or never end.
      if (!stat.isFile() || stat.size > MAX_BYTES) return undefined;
      return readFileSync(path);
    } catch {
      return undefined;
    }
  };
}
