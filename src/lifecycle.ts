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

/** A module whose start gives what it provides to the modules started after it. */
export interface Part<Provides> {
  /** Names the module in the lines logged about it. */
  readonly name: string;
  start(): Promise<Provides>;
  /** Undoes what `start` did, also when it failed half-way (the runner stops a module whose start failed). */
  stop(): Promise<void>;
  health?(): PartHealth[];
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
async function stopLogged(module: Part<unknown>, logger: Logger): Promise<void> {
  try {
    await module.stop();
  } catch (err) {
    logger.warn({ err, code: codeOf(err), module: module.name }, `${module.name} did not stop cleanly`);
  }
}

/** Starts one module and gives what it provides; the modules started so far are stopped when one fails. */
export type Use = <Provides>(part: Part<Provides>) => Promise<Provides>;

/** A sequence of modules started through `use`; `stopStarted` stops those started, in the order it chooses. */
function sequence(stopStarted: (started: Part<unknown>[]) => Promise<void>) {
  const all: Part<unknown>[] = [];
  const started: Part<unknown>[] = [];
  // Taken out first, so a second stop (after a failed start, or a repeated signal) stops nothing twice.
  const stop = (): Promise<void> => stopStarted(started.splice(0));
  const use: Use = async (part) => {
    all.push(part);
    // Counted as started before its start ends: a start that fails half-way is undone by its stop.
    started.push(part);
    return part.start();
  };
  /** Runs `build`; when it fails, stops what it started and rethrows. */
  const run = async <T>(build: (use: Use) => Promise<T>): Promise<T> => {
    try {
      return await build(use);
    } catch (err) {
      await stop();
      throw err;
    }
  };
  return { run, stop, health: (): PartHealth[] => all.flatMap((m) => m.health?.() ?? []) };
}

const inReverse = (logger: Logger) => async (started: Part<unknown>[]) => {
  for (const module of started.reverse()) await stopLogged(module, logger);
};
const allAtOnce = (logger: Logger) => async (started: Part<unknown>[]) => {
  await Promise.all(started.map((m) => stopLogged(m, logger)));
};

export function runModules(modules: readonly Module[], deps: { logger: Logger }): ModuleRunner {
  return runModulesStopping(modules, inReverse(deps.logger));
}

/**
 * Modules that start in order but stop all at once: the daemon's loops, so that none starts new
 * work (a plan, a report) while another is still finishing its tick.
 */
export function stopTogether(name: string, modules: readonly Module[], deps: { logger: Logger }): Module {
  return { name, ...runModulesStopping(modules, allAtOnce(deps.logger)) };
}

function runModulesStopping(modules: readonly Module[], stopStarted: (started: Part<unknown>[]) => Promise<void>): ModuleRunner {
  const s = sequence(stopStarted);
  return {
    start: () =>
      s.run(async (use) => {
        for (const module of modules) await use(module);
      }),
    stop: s.stop,
    // Every module, started or not: the list is known before the start.
    health: () => modules.flatMap((m) => m.health?.() ?? []),
  };
}

export interface Assembly<Provides> {
  /** Runs `build`, which starts each module with what the modules before it provide. When one fails, stops those started and rethrows. */
  start(): Promise<Provides>;
  /** Stops the started modules in reverse order; one that fails is logged and the others still stop. */
  stop(): Promise<void>;
  /** The health of every module started, in start order. */
  health(): PartHealth[];
}

/**
 * Modules wired by what they need: `build` starts each with `use` and passes what it gives to the
 * modules that need it, so a module cannot start before what it needs exists (the types see it).
 */
export function assemble<Provides>(build: (use: Use) => Promise<Provides>, deps: { logger: Logger }): Assembly<Provides> {
  const s = sequence(inReverse(deps.logger));
  return { start: () => s.run(build), stop: s.stop, health: s.health };
}

/** Like {@link assemble}, as one module of a larger assembly, whose modules stop all at once (as {@link stopTogether}). */
export function assembleStoppingTogether<Provides>(name: string, build: (use: Use) => Promise<Provides>, deps: { logger: Logger }): Part<Provides> {
  const s = sequence(allAtOnce(deps.logger));
  return { name, start: () => s.run(build), stop: s.stop, health: s.health };
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

/**
 * A module whose start makes one stoppable thing (or none) and gives what the modules after it use;
 * its stop stops that thing. Its health is read from what it gave (undefined before its start).
 */
export function providing<Provides>(
  name: string,
  start: () => Promise<{ made: Stoppable | null; provides: Provides }> | { made: Stoppable | null; provides: Provides },
  health?: (provided: Provides | undefined) => PartHealth[],
): Part<Provides> {
  let made: Stoppable | null = null;
  let provided: Provides | undefined;
  return {
    name,
    start: async () => {
      const r = await start();
      made = r.made;
      provided = r.provides;
      return r.provides;
    },
    stop: async () => {
      await made?.stop();
    },
    ...(health ? { health: () => health(provided) } : {}),
  };
}
