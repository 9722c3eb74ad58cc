/**
 * Property-based fuzzing of config loading: `parseConfig` on arbitrary objects and on mutations of
 * config.example.yaml, and `loadConfig` on random bytes and on mutated YAML text. The only
 * outcomes allowed are a config or a WattshiftError CONFIG_INVALID / CONFIG_SECRET_UNREADABLE
 * whose problems each say where (path) or what (message).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mutate, type Json, type Mutation } from './helpers/json-mutation.js';
import { parse, stringify } from 'yaml';
import { WattshiftError } from '../src/errors.js';
import { loadConfig, parseConfig, type ConfigProblem, type ParseOptions } from '../src/config/load.js';

const example = parse(readFileSync('config.example.yaml', 'utf8')) as Json;

let dir: string;
let options: ParseOptions;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ws-fuzz-config-'));
  const creds = join(dir, 'credentials');
  mkdirSync(creds);
  for (const name of ['spark-client-secret', 'webhook-secret', 'mqtt-password']) writeFileSync(join(creds, name), `${name}-value\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'secret.txt'), 'file-secret\n', { mode: 0o600 });
  options = { env: { CREDENTIALS_DIRECTORY: creds, SOME_SECRET: 'env-secret' }, baseDir: dir };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `fn`; passes if it returns, or throws one of `codes` with well-formed problems. */
function expectConfigOutcome(fn: () => unknown, codes: readonly string[]): 'ok' | string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (!(err instanceof WattshiftError)) throw new Error(`not a WattshiftError: ${String(err)}`, { cause: err });
    expect(codes).toContain(err.code);
    const problems = (err.details as { problems?: ConfigProblem[] } | undefined)?.problems;
    expect(Array.isArray(problems)).toBe(true);
    expect(problems!.length).toBeGreaterThan(0);
    for (const p of problems!) {
      expect(typeof p.path).toBe('string');
      expect(typeof p.message).toBe('string');
      expect(p.path.length + p.message.length).toBeGreaterThan(0);
      expect(p.message.length).toBeGreaterThan(0);
    }
    return err.code;
  }
}
const parseCodes = ['CONFIG_INVALID', 'CONFIG_SECRET_UNREADABLE'] as const;

// ---------------------------------------------------------------------------------------------
// Mutations of the example document

const jsonArb = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
/** Replacement values: arbitrary JSON, boundary numbers, and secret references of every kind. */
const valueArb: fc.Arbitrary<Json> = fc.oneof(
  jsonArb,
  fc.constantFrom(0, -1, 1e308, -1e308, 0.5, '', ' ', 'NO1', 'Europe/Oslo', 'Mars/Olympus', true, [], {}),
  fc.constantFrom('secret.txt', 'missing.txt', '/nonexistent/x', '../x', '', '.').map((file) => ({ file })),
  fc.constantFrom('SOME_SECRET', 'UNSET_VAR', '', 'PATH').map((env) => ({ env })),
  fc.constantFrom('spark-client-secret', 'missing', '../etc/passwd', '', 'a/b').map((credential) => ({ credential })),
);
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('retype' as const), at: fc.nat(), value: valueArb }),
  fc.record({
    op: fc.constant('unknownKey' as const),
    at: fc.nat(),
    key: fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'version', 'extra')),
    value: valueArb,
  }),
);

const mutatedExampleArb = fc.array(mutationArb, { minLength: 1, maxLength: 4 }).map((ms) => mutate(example, ms));

// ---------------------------------------------------------------------------------------------

describe('parseConfig under fuzzing', () => {
  it('accepts config.example.yaml as it is', () => {
    const loaded = parseConfig(example, options);
    expect(Object.isFrozen(loaded.config)).toBe(true);
    expect(loaded.secrets).toContain('spark-client-secret-value');
  });

  it('arbitrary values and objects: a typed config error, never another exception', () => {
    const codes = new Set<string>();
    fc.assert(
      fc.property(fc.oneof(fc.object(), fc.jsonValue(), fc.anything()), (doc) => {
        codes.add(expectConfigOutcome(() => parseConfig(doc, options), parseCodes));
      }),
      { numRuns: 300 },
    );
    expect(codes.has('ok')).toBe(false);
  });

  it('mutated example documents: a config or a typed config error with located problems', () => {
    const codes = new Set<string>();
    fc.assert(
      fc.property(mutatedExampleArb, (doc) => {
        const outcome = expectConfigOutcome(() => parseConfig(doc, options), parseCodes);
        codes.add(outcome);
        if (outcome === 'ok') {
          const again = parseConfig(doc, options);
          expect(Object.isFrozen(again.config)).toBe(true);
        }
      }),
      {
        numRuns: 300,
        // Each outcome at least once, whatever the seed: an unknown key, an unreadable secret, a harmless change.
        examples: [
          [mutate(example, [{ op: 'unknownKey', at: 0, key: 'bogus', value: 1 }])],
          [{ ...(example as object), spark: { ...(example as { spark: object }).spark, clientSecret: { file: 'missing.txt' } } }],
          [{ ...(example as object), spark: { ...(example as { spark: object }).spark, clientSecret: { env: 'SOME_SECRET' } } }],
        ],
      },
    );
    expect([...codes].sort()).toEqual(['CONFIG_INVALID', 'CONFIG_SECRET_UNREADABLE', 'ok']);
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('bogus');
    // 300 whole-config parses: seconds of CPU, more where the cores are shared.
  }, 120_000);
});

describe('loadConfig under fuzzing (files in a temp dir)', () => {
  let n = 0;
  const writeTemp = (content: Uint8Array | string): string => {
    const file = join(dir, `fuzz-${n++}.yaml`);
    writeFileSync(file, content);
    return file;
  };

  it('random bytes: only CONFIG_INVALID', () => {
    // Bytes such as `*\0` (an alias without its anchor) once escaped as a ReferenceError.
    const bytesArb = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 200 }).map((s) => Buffer.from(s, 'utf8')),
    );
    fc.assert(
      fc.property(fc.oneof(bytesArb, fc.constant(Buffer.from('*\u0000')), fc.constant(Buffer.from('version: 1\nsite: *site\n'))), (bytes) => {
        const file = writeTemp(bytes);
        expect(expectConfigOutcome(() => loadConfig(file, options.env, {}), ['CONFIG_INVALID'])).toBe('CONFIG_INVALID');
        rmSync(file);
      }),
      { numRuns: 200 },
    );
  });

  it('mutated example as YAML text: a config or a typed config error', () => {
    // Junk includes an alias without its anchor (`*nope`), which once escaped as a ReferenceError.
    fc.assert(
      fc.property(
        mutatedExampleArb,
        fc.nat(),
        fc.constantFrom('', '\t', ': :', '\n- x', '&a', '*nope', '!!binary', '{', '"', '\u0000'),
        (doc, cut, junk) => {
          const text = stringify(doc);
          // Also splice junk into the text at a random place.
          const at = cut % (text.length + 1);
          for (const content of [text, text.slice(0, at) + junk + text.slice(at)]) {
            const file = writeTemp(content);
            expectConfigOutcome(() => loadConfig(file, options.env, {}), parseCodes);
            rmSync(file);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
