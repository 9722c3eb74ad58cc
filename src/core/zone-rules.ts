/**
 * Where the core finds a zone's rules: compiled tz data that the process shell hands in (see
 * `src/zone-database.ts`), parsed once per zone. The data is an input like ICU's tables: results
 * depend only on (zone, instant). A zone without usable data gets `null`, and the caller takes the
 * Intl path, which gives the same results but keeps about 8 MB of ICU data resident.
 */
import { parseTzif, type ZoneRules } from './tzif.js';

/** The TZif bytes of a zone, or undefined when there are none. Must not throw. */
export type ZoneDataSource = (zone: string) => Uint8Array | undefined;

let source: ZoneDataSource | undefined;
const rulesByZone = new Map<string, ZoneRules | null>();

/** Sets where zone data comes from (undefined: nowhere, always Intl) and forgets what was read. */
export function useZoneData(next: ZoneDataSource | undefined): void {
  source = next;
  rulesByZone.clear();
}

/** The zone's rules, or `null` when it has no usable compiled data. */
export function zoneRules(zone: string): ZoneRules | null {
  let rules = rulesByZone.get(zone);
  if (rules === undefined) {
    const bytes = source?.(zone);
    rules = bytes ? parseTzif(bytes) : null;
    rulesByZone.set(zone, rules);
  }
  return rules;
}
