/**
 * `wattshift plan --config FILE [--explain] [--json]`: the plan in the terminal (a price chart,
 * one row per device, the reason of each slot with `--explain`). The running daemon's plan when
 * its status server answers; else the stored copy, read-only and labelled with its age.
 */
import { systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { loadConfig } from '../config/load.js';
import { dateTime } from '../status/format.js';
import { askDaemon, shownPlan, type ShownPlan } from './live-view.js';
import { readLatestPlan, type StoredPlan } from './stored-plan.js';
import { openStore } from '../store/index.js';
import { exitCodes } from './exit-codes.js';
import { renderPlan } from './plan-render.js';
import { cliLogger } from './register.js';
import { configPathOf } from './args.js';
import type { CliCommand } from './types.js';

export function deviceNames(config: Config): Record<string, string> {
  return Object.fromEntries(config.devices.map((d) => [d.id, d.name ?? d.id]));
}

/** The line above the chart: where the plan comes from, when it was made, what kind it is. */
export function planHeadline(shown: ShownPlan, tz: string): string[] {
  const v = shown.view;
  const kind = v.mode === 'fallback' ? 'fallback plan: no prices known' : 'optimal plan';
  const made = `made ${dateTime(v.createdMs, tz)} (${shown.ageMinutes} min ago)`;
  if (shown.origin === 'daemon') return [`Live plan from the running daemon, ${made}, ${kind}`];
  const out = [
    `Stored copy from the database, ${made}, ${kind}`,
    `  shown because ${shown.fallbackReason ?? 'the daemon did not answer'}; the daemon stores its plan at most every 30 min, so this may be older than what it follows`,
  ];
  const last = v.slots.at(-1);
  if (shown.stale && last) out.push(`Warning: this plan ended ${dateTime(last.startMs + v.slotMinutes * 60_000, tz)}; is the daemon running?`);
  return out;
}

export const planCommand: CliCommand = {
  name: 'plan',
  summary: 'show the plan: price chart, device slots, and why (--explain)',
  usage: '--config FILE [--explain] [--json]',
  options: {
    config: { type: 'string', short: 'c' },
    explain: { type: 'boolean', short: 'e' },
    json: { type: 'boolean' },
  },
  help: [
    'Asks the running daemon (http section) for the plan it follows; when it does not answer, shows',
    'the copy stored in the database (read-only) with its age. --json prints one JSON object.',
    'Exit codes: 0 shown (or no plan yet), 1 the database cannot be read, 78 invalid config.',
  ],
  async run(args, io) {
    const path = configPathOf(args, io, 'plan');
    if (path === null) return exitCodes.usage;
    // Secrets are not needed here: { credential } references outside systemd do not stop it.
    const { config, secrets } = loadConfig(path, io.env, { deferCredentials: true });
    const daemon = await askDaemon(config);
    const readStored = (): StoredPlan | undefined => {
      const store = openStore({ path: config.storage.path, readOnly: true, logger: cliLogger(io, secrets) });
      try {
        return readLatestPlan(store);
      } finally {
        store.close();
      }
    };
    const nowMs = daemon.view?.nowMs ?? systemClock.nowMs();
    const shown = shownPlan(daemon, readStored, config, nowMs);
    if (!shown) {
      if (args.values.json === true) io.stdout(JSON.stringify({ plan: null }));
      else io.stdout('No plan stored yet, and no running daemon answered with one: the daemon plans once it runs (`wattshift run`, or the service).');
      return exitCodes.ok;
    }
    const { view } = shown;
    const tz = config.site.timezone;
    if (args.values.json === true) {
      const { view: plan, ...meta } = shown;
      io.stdout(JSON.stringify({ ...meta, mode: plan.mode, createdMs: plan.createdMs, plan }));
      return exitCodes.ok;
    }
    for (const line of planHeadline(shown, tz)) io.stdout(line);
    const width = Math.max(40, Math.min(200, process.stdout.columns ?? 100));
    const text = renderPlan(view, { explain: args.values.explain === true, timezone: tz, width, names: deviceNames(config), nowMs });
    for (const line of text.replace(/\n$/, '').split('\n')) io.stdout(line);
    return exitCodes.ok;
  },
};
