/**
 * Loads CommonJS packages with `require`, not `import`. Importing a CommonJS package from ESM makes
 * Node 20 scan its source for export names (cjs-module-lexer, compiled WebAssembly); for mqtt and
 * modbus-serial that costs about 5 MB of RSS which the process never gives back. Measured with
 * `node --expose-gc` on Node 20.20: see the README's memory notes.
 */
import { createRequire } from 'node:module';

export const requireCjs = createRequire(import.meta.url);
