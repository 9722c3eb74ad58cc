/** "Did you mean" for names a user typed: config keys, device ids, profile and tariff names. */

/** Edit distance (insertions, deletions, substitutions and swaps of neighbours), case-insensitive. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[s.length]![t.length]!;
}

/** The known name nearest to `typed`, if it is near enough to be a typo (a third of its letters at most). */
export function closest(typed: string, known: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(typed.length / 3));
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    if (name === typed) continue;
    const d = distance(typed, name);
    if (d <= limit && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** ` (did you mean "x"?)`, or nothing when no known name is near. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const near = closest(typed, known);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}
