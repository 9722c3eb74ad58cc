import { Database } from './sqlite.js';
import { z } from 'zod';
import { WattshiftError } from '../errors.js';

/** SQLite result codes that retrying cannot fix (a bug or a damaged file, not a full disk). */
const permanentSqliteCodes = ['SQLITE_CONSTRAINT', 'SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_MISMATCH', 'SQLITE_RANGE', 'SQLITE_ERROR'];

export function sqliteCodeOf(err: unknown): string | undefined {
  return err instanceof Database.SqliteError ? err.code : undefined;
}

/** Turns anything a store operation threw into a WattshiftError (STORE_FAILED unless it is one). */
export function storeError(op: string, err: unknown): WattshiftError {
  if (err instanceof WattshiftError) return err;
  const sqliteCode = sqliteCodeOf(err);
  const permanent = sqliteCode !== undefined && permanentSqliteCodes.some((c) => sqliteCode.startsWith(c));
  const message = err instanceof Error ? err.message : String(err);
  return new WattshiftError('STORE_FAILED', `store: ${op} failed: ${message}`, {
    cause: err,
    retryable: !permanent,
    details: { op, ...(sqliteCode === undefined ? {} : { sqliteCode }) },
  });
}

/** Runs `fn`, wrapping whatever it throws with `storeError`. */
export function guard<T>(op: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw storeError(op, err);
  }
}

/** A caller bug: illegal transition, unknown id, invalid input. */
export function misuse(message: string, details: Record<string, unknown>): WattshiftError {
  return new WattshiftError('INTERNAL', `store: ${message}`, { details });
}

/** A TEXT column holding JSON, parsed (a parse failure is a zod issue, hence STORE_FAILED). */
export const jsonText = z.string().transform((text, ctx): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not valid JSON: ${err instanceof Error ? err.message : String(err)}` });
    return z.NEVER;
  }
});

export const stringArrayJson = jsonText.pipe(z.array(z.string()));

/** Parses a row read back from SQLite; a mismatch means the file holds data we did not write. */
export function parseRow<S extends z.ZodType>(schema: S, row: unknown, table: string): z.output<S> {
  const result = schema.safeParse(row);
  if (result.success) return result.data;
  throw new WattshiftError('STORE_FAILED', `store: corrupt row in ${table}: ${z.prettifyError(result.error)}`, {
    retryable: false,
    cause: result.error,
    details: { table },
  });
}

/** Checks a caller's input against a schema; a mismatch is a caller bug. */
export function checkInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw misuse(`invalid ${what}: ${z.prettifyError(result.error)}`, { what });
}

/** JSON.stringify that refuses values JSON cannot represent (undefined, functions, cycles). */
export function toJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw misuse(`${what} is not JSON-serialisable: ${err instanceof Error ? err.message : String(err)}`, { what });
  }
  if (text === undefined) throw misuse(`${what} is not JSON-serialisable`, { what });
  return text;
}
