/** Exponential backoff with full jitter, capped: `random` is injectable so tests are exact. */
export function backoffMs(attempt: number, options: { baseMs: number; maxMs: number }, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
