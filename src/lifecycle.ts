/**
 * One lifecycle for the parts of a process (the daemon's `buildApp`, the partner hub): each part is
 * a module that starts, stops and may report its health. A runner starts them in order and stops
 * them in reverse, so a part never outlives what it uses.
 */
import { codeOf } from './errors.js';
import type { Logger } from './log.js';

/** A part's health, as /healthz and the status page list it. */
export interface PartHealth {
  name: string;
  ok: boolean;
  lastError?: { code: string; message: string; atMs: number };
}

export interface Module {
  /** Names the module in the lines logged about it. */
  readonly name: string;
  start(): Promise<void>;
  /** Undoes what `start` did, also when it failed half-way (the runner stops a module whose start failed). */
  stop(): Promise<void>;
  health?(): PartHealth[];
}

export interface ModuleRunner {
  /** Starts the modules in order. When one fails, stops it and those started before, and rethrows its error. */
  start(): Promise<void>;
  /** Stops the started modules in reverse order; one that fails is logged and the others still stop. */
  stop(): Promise<void>;
  /** The health of every module, in module order. */
  health(): PartHealth[];
}

/** Stops one module, logging a failure instead of throwing it. */
async function stopLogged(module: Module, logger: Logger): Promise<void> {
  try {
    await module.stop();
  } catch (err) {
    logger.warn({ err, code: codeOf(err), module: module.name }, `${module.name} did not stop cleanly`);
  }
}

/** Starts modules in order; `stopStarted` stops those started, in the order it chooses. */
function runner(modules: readonly Module[], stopStarted: (started: Module[]) => Promise<void>): ModuleRunner {
  const started: Module[] = [];
  // Taken out first, so a second stop (after a failed start, or a repeated signal) stops nothing twice.
  const stop = (): Promise<void> => stopStarted(started.splice(0));
  return {
    async start() {
      for (const module of modules) {
        // Counted as started before its start ends: a start that fails half-way is undone by its stop.
        started.push(module);
        try {
          await module.start();
        } catch (err) {
          await stop();
          throw err;
        }
      }
    },
    stop,
    health: () => modules.flatMap((m) => m.health?.() ?? []),
  };
}

export function runModules(modules: readonly Module[], deps: { logger: Logger }): ModuleRunner {
  return runner(modules, async (started) => {
    for (const module of started.reverse()) await stopLogged(module, deps.logger);
  });
}

/**
 * Modules that start in order but stop all at once: the daemon's loops, so that none starts new
 * work (a plan, a report) while another is still finishing its tick.
 */
export function stopTogether(name: string, modules: readonly Module[], deps: { logger: Logger }): Module {
  const together = runner(modules, async (started) => {
    await Promise.all(started.map((m) => stopLogged(m, deps.logger)));
  });
  return { name, ...together };
}

/** Something a module's start makes and its stop ends: a loop, a server, a connection. */
export interface Stoppable {
  stop(): Promise<unknown>;
}

/** A module whose start makes one stoppable thing (or none, when not configured); its stop stops it. */
export function moduleOf(name: string, start: () => Promise<Stoppable | null> | Stoppable | null, health?: () => PartHealth[]): Module {
  let made: Stoppable | null = null;
  return {
    name,
    start: async () => {
      made = await start();
    },
    stop: async () => {
      await made?.stop();
    },
    ...(health ? { health } : {}),
  };
}
