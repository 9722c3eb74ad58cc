/**
 * config.example.yaml and the generated docs cannot go stale: every key of the schema must
 * appear in the example, the example's alternative sources ("#>" lines) and the sections it shows
 * switched off ("#=" lines) must be valid, and the committed docs must equal what the generator
 * writes now.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { collapseOption, renderConfigDocs, renderErrorDocs } from '../src/config/docs.js';
import { parseConfig } from '../src/config/load.js';
import { configSchema, sourceOptionSchemas, sourceSchema } from '../src/config/schema.js';
import { discriminatorValue, listFields } from '../src/config/walk.js';
import { errorCodes } from '../src/errors.js';

const exampleText = readFileSync('config.example.yaml', 'utf8');
const example: unknown = parse(exampleText);
/** The sections the example shows switched off: its "#=" lines, without the marker. */
const switchedOff = parse(
  exampleText
    .split('\n')
    .filter((l) => l.startsWith('#='))
    .map((l) => l.replace(/^#= ?/, ''))
    .join('\n'),
) as Record<string, unknown>;
/** The fleet gateway's example shows the other `upstream` mode. */
const fleetExampleText = readFileSync('config.fleet.example.yaml', 'utf8');
const capabilityKeys = new Set(['switch', 'meter', 'thermometer', 'charger']);

/** Key paths of a document in the schema's notation, plus every source object found. */
function documentPaths(value: unknown, prefix: string, out: Set<string>, sources: Record<string, unknown>[]): void {
  if (Array.isArray(value)) {
    for (const v of value) documentPaths(v, `${prefix}[]`, out, sources);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const obj = value as Record<string, unknown>;
  let at = prefix;
  if (prefix === 'devices[]' && typeof obj.kind === 'string') at = `${prefix}<kind=${obj.kind}>`;
  if (prefix === 'upstream' && typeof obj.mode === 'string') at = `upstream<mode=${obj.mode}>`;
  if (prefix === 'devices[]<kind=solar>.source' && typeof obj.type === 'string') at = `${prefix}<type=${obj.type}>`;
  if (/^modbus\.[^.]+$/.test(prefix)) {
    at = obj.type === 'rtu' ? 'modbus.<name><type=rtu>' : 'modbus.<name><type=tcp|rtuOverTcp>';
  }
  for (const [k, v] of Object.entries(obj)) {
    const path = at === '' ? k : `${at}.${k}`;
    out.add(path);
    if (capabilityKeys.has(k) && prefix.startsWith('devices[]')) {
      sources.push(v as Record<string, unknown>);
      continue;
    }
    documentPaths(v, path, out, sources);
  }
}

/** Every key of a source, nested ones as `a.b`. */
function keyPaths(value: Record<string, unknown>, prefix: string): string[] {
  return Object.entries(value).flatMap(([k, v]) => {
    const path = `${prefix}${k}`;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? [path, ...keyPaths(v as Record<string, unknown>, `${path}.`)] : [path];
  });
}

function alternativeSources(): Record<string, unknown>[] {
  return exampleText
    .split('\n')
    .filter((l) => /^\s*#>/.test(l))
    .map((l) => parse(l.replace(/^\s*#>/, '')) as Record<string, unknown>);
}

describe('config.example.yaml', () => {
  const paths = new Set<string>();
  const sources: Record<string, unknown>[] = [];
  documentPaths(example, '', paths, sources);
  documentPaths({ upstream: (parse(fleetExampleText) as { upstream: unknown }).upstream }, '', paths, []);
  documentPaths(switchedOff, '', paths, []);

  it('has every key of the schema', () => {
    const missing = listFields(configSchema, '', { collapse: collapseOption })
      .map((f) => f.path)
      .filter((p) => !paths.has(p));
    expect(missing).toEqual([]);
  });

  it('shows every key of every source type, in use or as a "#>" alternative', () => {
    const all = [...sources, ...alternativeSources()];
    const missing: string[] = [];
    for (const option of sourceOptionSchemas) {
      const type = discriminatorValue(option, 'type') ?? '?';
      const seen = new Set(all.filter((s) => s.type === type).flatMap((s) => keyPaths(s, '')));
      for (const f of listFields(z.strictObject({ s: option }))) {
        const key = f.path.replace(/^s\.?/, '');
        if (key !== '' && !seen.has(key)) missing.push(`${type}.${key}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has valid "#=" sections: switched on, the example parses and has them', () => {
    expect(Object.keys(switchedOff)).toEqual(['ocpp']);
    const on = parseConfig({ ...(example as object), ...switchedOff }, { deferCredentials: true }).config;
    expect(on.ocpp).toMatchObject({ port: 8887, tls: { cert: '/etc/wattshift/ocpp-cert.pem' } });
  });

  it('has only valid "#>" alternatives', () => {
    const alternatives = alternativeSources();
    expect(alternatives.length).toBeGreaterThan(0);
    for (const alt of alternatives) expect(sourceSchema.safeParse(alt).error?.issues ?? []).toEqual([]);
  });

  it('comments every key', () => {
    // Each key line (not a continuation of a flow value) is preceded by a comment line, or
    // sits inside a flow mapping on a commented line.
    const lines = [...exampleText.split('\n').map((l) => l.replace(/^#= ?/, '')), '', ...fleetExampleText.split('\n')];
    const uncommented: string[] = [];
    lines.forEach((line, i) => {
      const m = /^(\s*)(- )?([A-Za-z][\w-]*):/.exec(line);
      if (!m) return;
      const prev = lines[i - 1]?.trim() ?? '';
      if (!prev.startsWith('#')) uncommented.push(`${i + 1}: ${line.trim()}`);
    });
    expect(uncommented).toEqual([]);
  });
});

describe('generated docs', () => {
  it('docs/config.md is up to date (npm run docs)', () => {
    expect(readFileSync('docs/config.md', 'utf8')).toBe(renderConfigDocs());
  });

  it('docs/errors.md is up to date and lists every error code', () => {
    const text = readFileSync('docs/errors.md', 'utf8');
    expect(text).toBe(renderErrorDocs());
    for (const [code, info] of Object.entries(errorCodes)) {
      expect(text).toContain(`| \`${code}\` | ${info.retryable ? 'yes' : 'no'} |`);
      expect(text).toContain(info.hint.split('|')[0] ?? '');
    }
  });

  it('docs/config.md documents every key', () => {
    const text = readFileSync('docs/config.md', 'utf8');
    for (const f of listFields(configSchema, '', { collapse: collapseOption })) {
      if (f.container && !f.path.includes('.')) expect(text).toContain(`## \`${f.path}\``);
      else expect(text).toContain(`| \`${f.path}\` |`);
    }
  });
});
