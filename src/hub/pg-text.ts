/**
 * PostgreSQL stores no NUL character (U+0000) in `text`, and `jsonb` refuses the `\u0000` escape:
 * one such character in an API event or a gateway's report would fail every attempt to store it.
 * The hub keeps such a message with each NUL replaced by U+FFFD (the replacement character), in
 * what it stores and in what it sends on, so every copy of the message reads the same.
 */

/** A `\u0000` escape in JSON text: preceded by an even number of backslashes (escaped backslashes). */
const escapedNul = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** The JSON text of `value` with each NUL in its strings and keys replaced, and how many were. */
export function jsonWithoutNul(value: unknown): { json: string; replaced: number } {
  const raw = JSON.stringify(value);
  if (!raw.includes('\\u0000')) return { json: raw, replaced: 0 };
  let replaced = 0;
  const json = raw.replace(escapedNul, (_match, backslashes: string) => {
    replaced++;
    return `${backslashes}\\ufffd`;
  });
  return { json, replaced };
}

/** `value` itself when it holds no NUL, else a copy with each NUL replaced. */
export function withoutNul<T>(value: T): { value: T; replaced: number } {
  const { json, replaced } = jsonWithoutNul(value);
  return replaced === 0 ? { value, replaced } : { value: JSON.parse(json) as T, replaced };
}
