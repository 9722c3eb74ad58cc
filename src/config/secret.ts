/**
 * Secrets in the config. A secret field holds `{ file: path }`, `{ env: NAME }`,
 * `{ credential: name }` (systemd `LoadCredential`, read from `$CREDENTIALS_DIRECTORY/name`)
 * or, discouraged, the value inline. References are resolved into strings before the schema
 * parses the document, so the parsed `Config` only ever holds strings.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { arrayElement, objectShape, recordValue, unionOptions, unwrap } from './walk.js';

/** A secret string in the schema; the walker finds it by its `secret` meta. */
export function secretField(description: string) {
  return z
    .string()
    .min(1)
    .meta({
      description: `${description} Secret: \`{ file: path }\`, \`{ env: NAME }\`, \`{ credential: name }\` or (discouraged) inline.`,
      secret: true,
    });
}

/** An optional secret: absent or `null` means not set. */
export function optionalSecretField(description: string) {
  return secretField(description)
    .nullish()
    .transform((v) => v ?? undefined);
}

const secretRefSchema = z.union([
  z.strictObject({ file: z.string().min(1) }),
  z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name') }),
  z.strictObject({ credential: z.string().regex(/^[A-Za-z0-9_.@-]+$/, 'expected a credential name') }),
]);

export interface SecretContext {
  env: NodeJS.ProcessEnv;
  /** Relative `file` paths are resolved against this directory (the config file's). */
  baseDir: string;
  /** `check` outside systemd: a `{ credential }` without `$CREDENTIALS_DIRECTORY` is a warning. */
  deferCredentials?: boolean;
}

export interface SecretProblem {
  path: string;
  message: string;
  /** true when the reference was well-formed but could not be read. */
  unreadable: boolean;
}

export interface SecretResolution {
  /** A copy of the input with every secret reference replaced by its value. */
  document: unknown;
  secrets: string[];
  warnings: string[];
  problems: SecretProblem[];
}

/** Placeholder for a secret that could not be read: the schema still parses, the problem is reported. */
const unresolved = '\u0000unresolved';

type Segment = string | number;

export function formatPath(path: readonly Segment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readSecretFile(file: string): string {
  const text = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  if (text.trim() === '') throw new Error('the file is empty');
  return text;
}

function resolveOne(raw: unknown, path: string, ctx: SecretContext, out: SecretResolution): unknown {
  if (typeof raw === 'string') {
    if (raw.length > 0) {
      out.secrets.push(raw);
      out.warnings.push(`${path}: secret written inline in the config; prefer { file }, { env } or { credential }`);
    }
    return raw;
  }
  if (!isPlainObject(raw)) return raw; // the schema reports the wrong type
  const ref = secretRefSchema.safeParse(raw);
  if (!ref.success) {
    out.problems.push({ path, message: 'expected a secret: a string, { file: path }, { env: NAME } or { credential: name }', unreadable: false });
    return unresolved;
  }
  const r = ref.data;
  try {
    let value: string;
    if ('file' in r) {
      const file = isAbsolute(r.file) ? r.file : resolve(ctx.baseDir, r.file);
      try {
        value = readSecretFile(file);
      } catch (err) {
        throw new Error(`cannot read secret file ${file}: ${errMessage(err)}`);
      }
      const mode = statSync(file).mode & 0o777;
      if ((mode & 0o077) !== 0) {
        out.warnings.push(`${path}: secret file ${file} is readable by group or others (mode ${mode.toString(8).padStart(4, '0')}); chmod 600 it`);
      }
    } else if ('env' in r) {
      const v = ctx.env[r.env];
      if (v === undefined || v === '') throw new Error(`environment variable ${r.env} is not set`);
      value = v;
    } else {
      const dir = ctx.env.CREDENTIALS_DIRECTORY;
      if (dir === undefined || dir === '') {
        if (ctx.deferCredentials) {
          out.warnings.push(
            `${path}: credential "${r.credential}" not checked: $CREDENTIALS_DIRECTORY is not set (it is under systemd LoadCredential=)`,
          );
          return unresolved;
        }
        throw new Error(`credential "${r.credential}" needs $CREDENTIALS_DIRECTORY (systemd LoadCredential=), which is not set`);
      }
      const file = join(dir, r.credential);
      try {
        value = readSecretFile(file);
      } catch (err) {
        throw new Error(`cannot read credential ${file}: ${errMessage(err)}`);
      }
    }
    out.secrets.push(value);
    return value;
  } catch (err) {
    out.problems.push({ path, message: errMessage(err), unreadable: true });
    return unresolved;
  }
}

function errMessage(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such file';
    if (code === 'EACCES') return 'permission denied';
    if (code === 'EISDIR') return 'is a directory';
    return err.message;
  }
  return String(err);
}

/** Walks the raw document along the schema and resolves every secret field. */
export function resolveSecrets(schema: z.core.$ZodType, document: unknown, ctx: SecretContext): SecretResolution {
  const out: SecretResolution = { document: undefined, secrets: [], warnings: [], problems: [] };
  const seen = new Set<string>();
  const walk = (node: z.core.$ZodType, value: unknown, path: Segment[]): unknown => {
    const u = unwrap(node);
    if (u.secret) {
      const key = formatPath(path);
      if (seen.has(key)) return value;
      seen.add(key);
      return resolveOne(value, key, ctx, out);
    }
    const shape = objectShape(u.inner);
    if (shape && isPlainObject(value)) {
      const copy: Record<string, unknown> = { ...value };
      for (const [k, child] of Object.entries(shape)) {
        if (k in copy) copy[k] = walk(child, copy[k], [...path, k]);
      }
      return copy;
    }
    const el = arrayElement(u.inner);
    if (el && Array.isArray(value)) return value.map((v, i) => walk(el, v, [...path, i]));
    const rec = recordValue(u.inner);
    if (rec && isPlainObject(value)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(rec, v, [...path, k])]));
    }
    const union = unionOptions(u.inner);
    if (union) return union.options.reduce<unknown>((acc, option) => walk(option, acc, path), value);
    return value;
  };
  out.document = walk(schema, document, []);
  return out;
}
