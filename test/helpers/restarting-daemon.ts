/**
 * The daemon under a supervisor that starts it again as soon as it dies (systemd's
 * Restart=always), each time from a warm standby process so that a restart costs simulated
 * minutes even on a fast clock.
 */
import {
  spawnStandbyDaemon,
  waitUntilSim,
  type DaemonLogLine,
  type DaemonProcess,
  type SpawnOptions,
  type StandbyDaemon,
  type World,
} from './daemon-harness.js';

export interface Kill {
  /** Simulated time of the SIGKILL. */
  atMs: number;
  cause: string;
  /** The process killed (index into `incarnations`). */
  incarnation: number;
}

export interface RestartingDaemon {
  /** Every process started, in order; the last one is running. */
  readonly incarnations: readonly DaemonProcess[];
  readonly kills: readonly Kill[];
  /** Resolves once the running process has logged that it runs (waits across restarts). */
  running(): Promise<DaemonProcess>;
  /** SIGKILLs the running process (once; not while stopping); the next one starts when it has gone. */
  kill(cause: string): void;
  /** Kills the process once it has run for `minRunMs` of simulated time (waiting across restarts). */
  killAfterRunning(cause: string, minRunMs: number): Promise<void>;
  /** Stops the process with SIGTERM once it runs, and drops the standbys; resolves with its exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const isRunningLine = (l: DaemonLogLine): boolean => l.msg === 'running';

/** The simulated time of a daemon's log line (stamped on the real clock). */
export function simTimeOf(world: World, line: DaemonLogLine): number {
  return world.startMs + (Date.parse(String(line['time'])) - world.realOriginMs) * world.speed;
}

/**
 * Starts the daemon with `standbys` more processes loading behind it (default 2). After `maxKills`
 * kills (default unlimited) further kills are ignored.
 */
export function startRestartingDaemon(world: World, options: SpawnOptions & { standbys?: number; maxKills?: number } = {}): RestartingDaemon {
  const { standbys = 2, maxKills = Number.POSITIVE_INFINITY, ...spawnOptions } = options;
  const pool: StandbyDaemon[] = [];
  const incarnations: StandbyDaemon[] = [];
  const kills: Kill[] = [];
  const killed = new Set<DaemonProcess>();
  let stopping = false;
  const refill = (): void => {
    while (!stopping && pool.length < standbys) pool.push(spawnStandbyDaemon(world, spawnOptions));
  };

  const startNext = (): void => {
    const next = pool.shift() ?? spawnStandbyDaemon(world, spawnOptions);
    incarnations.push(next);
    next.start();
    // Standbys load once this process runs, not against its start.
    void next.waitForLog(isRunningLine, 120_000).then(refill, refill);
    void next.exited.then(() => {
      if (!stopping && incarnations.at(-1) === next) startNext();
    });
  };
  startNext();
  const current = (): StandbyDaemon => incarnations.at(-1)!;

  return {
    incarnations,
    kills,
    async running() {
      for (;;) {
        if (stopping) throw new Error('the daemon is being stopped');
        const d = current();
        // One we killed: its successor starts when it has gone. Any other must get to run.
        if (killed.has(d)) await d.exited;
        else if (
          await d.waitForLog(isRunningLine, 60_000).then(
            () => !killed.has(d),
            (err: unknown) => (killed.has(d) ? false : Promise.reject(err)),
          )
        )
          return d;
      }
    },
    kill(cause) {
      const d = current();
      if (stopping || killed.has(d) || kills.length >= maxKills) return;
      killed.add(d);
      kills.push({ atMs: world.clock.nowMs(), cause, incarnation: incarnations.length - 1 });
      d.kill('SIGKILL');
    },
    async killAfterRunning(cause, minRunMs) {
      while (kills.length < maxKills) {
        const d = await this.running();
        await waitUntilSim(world, simTimeOf(world, d.logs.find(isRunningLine)!) + minRunMs);
        if (d === current() && !killed.has(d)) return this.kill(cause);
      }
    },
    async stop() {
      const last = await this.running();
      stopping = true;
      last.kill('SIGTERM');
      const exit = await last.exited;
      for (const d of pool) d.kill('SIGKILL');
      await Promise.all(pool.map((d) => d.exited));
      return exit;
    },
  };
}
