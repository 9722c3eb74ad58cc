/** Checks of the config against the machine (not the schema): used by `check` and `run`. */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from './schema.js';
import type { ConfigProblem } from './load.js';

/** The database's directory must exist and be writable (and the file, if it exists, writable). */
export function checkStorage(config: Pick<Config, 'storage'>): ConfigProblem[] {
  const file = config.storage.path;
  if (file === ':memory:') return [];
  const dir = dirname(file);
  try {
    if (!statSync(dir).isDirectory()) return [{ path: 'storage.path', message: `${dir} is not a directory` }];
  } catch {
    return [{ path: 'storage.path', message: `the database directory ${dir} does not exist` }];
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    return [{ path: 'storage.path', message: `the database directory ${dir} is not writable` }];
  }
  try {
    accessSync(file, constants.R_OK | constants.W_OK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return [{ path: 'storage.path', message: `the database file ${file} is not writable` }];
  }
  return [];
}
