/** Turns any error into short human lines for the terminal: code, message, key paths. */
import { errorCodes, WattshiftError } from '../errors.js';
import type { ConfigProblem } from '../config/load.js';

export function formatProblem(p: ConfigProblem): string {
  const at = p.line !== undefined ? `line ${p.line}${p.column !== undefined ? `, column ${p.column}` : ''}` : '';
  if (p.path === '') return `${at === '' ? '(file)' : at}: ${p.message}`;
  return `${p.path}${at === '' ? '' : ` (${at})`}: ${p.message}`;
}

export function problemsOf(err: unknown): ConfigProblem[] {
  if (!(err instanceof WattshiftError)) return [];
  const problems = err.details?.problems;
  return Array.isArray(problems) ? (problems as ConfigProblem[]) : [];
}

/** First line: `wattshift: CODE: message`; then one line per problem and a hint (the code's own, unless `hint` is given). */
export function formatError(err: unknown, hint?: string): string[] {
  if (err instanceof WattshiftError) {
    const problems = problemsOf(err);
    const lines = [
      `wattshift: ${err.code}: ${problems.length > 0 && err.code === 'CONFIG_SECRET_UNREADABLE' ? 'a secret cannot be read' : err.message}`,
    ];
    for (const p of problems) {
      if (p.path === '' && p.line === undefined && err.message.includes(p.message)) continue; // already the headline
      lines.push(`  ${formatProblem(p)}`);
    }
    lines.push(`  hint: ${hint ?? errorCodes[err.code].hint}`);
    return lines;
  }
  const message = err instanceof Error ? err.message : String(err);
  return [`wattshift: INTERNAL: ${message}`, `  hint: ${errorCodes.INTERNAL.hint}`];
}
