/** The checks `check` and `run` both make before anything connects: one list, one pass. */
import type { MachineChecks } from '../config/load.js';
import { checkStorage } from '../config/preflight.js';
import { checkDeviceSources, checkTlsFiles } from '../devices/preflight.js';

export const machineChecks: MachineChecks = (config) => [
  ...(config.storage ? checkStorage({ storage: config.storage }) : []),
  ...checkTlsFiles(config),
  ...checkDeviceSources(config),
];
