import type { Logger } from './log.js';

/**
 * Warnings about hostile input (refused webhooks, flooded commands) at most `perWindow` lines per
 * code per window of wall time; the lines suppressed in a window are counted in the next line
 * written for that code, so a flood costs a few lines, not thousands. Wall time, not the clock:
 * it protects the journal, which fills in real time. `level: 'info'` for a person's mistake (a
 * command typo), which is no fault of the home's.
 */
export function rateLimitedWarn(
  log: Logger,
  options: { perWindow?: number; windowMs?: number; now?: () => number; level?: 'warn' | 'info' } = {},
): (code: string, fields: Record<string, unknown>, message: string) => void {
  const perWindow = options.perWindow ?? 5;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const state = new Map<string, { startMs: number; written: number; suppressed: number }>();
  return (code, fields, message) => {
    const t = now();
    let s = state.get(code);
    if (!s || t - s.startMs >= windowMs || t < s.startMs) {
      const suppressed = s?.suppressed ?? 0;
      s = { startMs: t, written: 0, suppressed: 0 };
      state.set(code, s);
      if (suppressed > 0) fields = { ...fields, suppressed };
    }
    if (s.written >= perWindow) {
      s.suppressed++;
      return;
    }
    s.written++;
    log[options.level ?? 'warn']({ code, ...fields }, message);
  };
}
