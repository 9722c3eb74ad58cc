/**
 * Waits on state, not on time: polls `check` until it holds or `timeoutMs` of real time passed,
 * then asserts it with `what` as the message. With `settleTurns`, lets that many turns of the
 * event loop run after, so the callbacks the state change set off have run.
 */
import { expect } from 'vitest';

export async function until(
  check: () => boolean,
  what: string,
  options: { timeoutMs?: number; everyMs?: number; settleTurns?: number } = {},
): Promise<void> {
  const { timeoutMs = 15_000, everyMs = 5, settleTurns = 0 } = options;
  for (const end = Date.now() + timeoutMs; !check() && Date.now() < end;) await new Promise((r) => setTimeout(r, everyMs));
  expect(check(), what).toBe(true);
  for (let i = 0; i < settleTurns; i++) await new Promise((r) => setImmediate(r));
}
