/** The doubling ceiling of attempt `attempt` (1 for the first retry): `baseMs`, then twice that each time, at most `maxMs`. */
export function backoffCeilingMs(attempt: number, options: { baseMs: number; maxMs: number }): number {
  return Math.min(options.maxMs, options.baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 30));
}

/**
 * Exponential backoff with "equal jitter": half of the ceiling fixed, the other half random, so a
 * retry never comes sooner than half its step while retries of many clients still spread.
 * `random` is injectable so tests are exact.
 */
export function backoffMs(attempt: number, options: { baseMs: number; maxMs: number }, random: () => number = Math.random): number {
  const ceiling = backoffCeilingMs(attempt, options);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
