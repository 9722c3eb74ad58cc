/**
 * PostgreSQL stores no NUL character (U+0000) in `text`, and `jsonb` refuses the `\u0000` escape
 * and a lone UTF-16 surrogate (half of a pair, which JSON delivers as an escape such as `\ud800`):
 * one such character in an API event or a gateway's report would fail every attempt to store it.
 * The hub keeps such a message with each of them replaced by U+FFFD (the replacement character),
 * in what it stores and in what it sends on, so every copy of the message reads the same.
 */
/** A `\u0000` escape in JSON text: preceded by an even number of backslashes (escaped backslashes). */
const escapedNul = /(?<!\\)((?:\\\\)*)\\u0000/g;
/** A surrogate escape in JSON.stringify's output, which escapes lone surrogates only (it writes a whole pair as it is). */
const escapedLoneSurrogate = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/** How many characters PostgreSQL could not store were replaced, by kind. */
export interface Replaced {
  nul: number;
  loneSurrogates: number;
}

/** The JSON text of `value` with each NUL and lone surrogate in its strings and keys replaced, and how many were. */
export function storableJson(value: unknown): { json: string } & Replaced {
  let json = JSON.stringify(value);
  const replaced: Replaced = { nul: 0, loneSurrogates: 0 };
  const replace = (pattern: RegExp, kind: keyof Replaced): void => {
    json = json.replace(pattern, (_match, backslashes: string) => {
      replaced[kind]++;
      return `${backslashes}\\ufffd`;
    });
  };
  if (json.includes('\\u0000')) replace(escapedNul, 'nul');
  if (json.includes('\\ud')) replace(escapedLoneSurrogate, 'loneSurrogates');
  return { json, ...replaced };
}

/** `value` itself when PostgreSQL can store all its text, else a copy with what it cannot replaced. */
export function storable<T>(value: T): { value: T } & Replaced {
  const { json, ...replaced } = storableJson(value);
  return replaced.nul + replaced.loneSurrogates === 0 ? { value, ...replaced } : { value: JSON.parse(json) as T, ...replaced };
}

/** Warns once per kind replaced in `what` (an API event, a report), through the caller's rate-limited warning. */
export function warnReplaced(
  warn: (code: string, fields: Record<string, unknown>, message: string) => void,
  replaced: Replaced,
  what: string,
  fields: Record<string, unknown>,
): void {
  if (replaced.nul > 0)
    warn('HUB_TEXT_NUL_REPLACED', { ...fields, replaced: replaced.nul }, `${what} holds NUL characters; kept with each replaced by U+FFFD`);
  if (replaced.loneSurrogates > 0)
    warn(
      'HUB_TEXT_SURROGATE_REPLACED',
      { ...fields, replaced: replaced.loneSurrogates },
      `${what} holds lone UTF-16 surrogates; kept with each replaced by U+FFFD`,
    );
}
