/** The entry of the hub's bundle (dist/hub.js): `wattshift hub`, loaded by parts.ts when that command runs. */
import { runHubCommand } from './hub-run.js';
import { partEntry } from './part-entry.js';

export const { runPartCommand } = partEntry({ hub: runHubCommand });
