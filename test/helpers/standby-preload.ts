/**
 * `node --import` preload of a standby daemon (spawnStandbyDaemon): loads the daemon's modules,
 * says so on stderr, then holds the entry point back until a line arrives on stdin. Module loading
 * is most of a cold start; on an accelerated clock that second would be an hour of downtime.
 */
import { createRequire } from 'node:module';

await import('../../src/cli/dispatch.js');
await import('../../src/cli/format-error.js');
// Packages the daemon requires on first use (src/cjs.ts), loaded into the same require cache.
const require = createRequire(import.meta.url);
for (const name of ['mqtt', 'modbus-serial']) require(name);
process.stderr.write('standby: loaded\n');
await new Promise<void>((resolve) => {
  process.stdin.once('data', () => {
    process.stdin.pause();
    resolve();
  });
});
