/**
 * `node --import` preload of a standby daemon (spawnStandbyDaemon): loads the daemon's modules,
 * says so on stderr, then holds the entry point back until a line arrives on stdin. Module loading
 * is most of a cold start; on an accelerated clock that second would be an hour of downtime.
 */
await import('../../src/cli/dispatch.js');
await import('../../src/cli/format-error.js');
// The Modbus stack is imported on a bus's first connect (src/devices/modbus/bus.ts).
await import('modbus-serial');
process.stderr.write('standby: loaded\n');
await new Promise<void>((resolve) => {
  process.stdin.once('data', () => {
    process.stdin.pause();
    resolve();
  });
});
