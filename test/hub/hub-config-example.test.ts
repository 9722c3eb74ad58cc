/**
 * config.hub.example.yaml stays true: it parses with the hub's schema, and it shows every key the
 * schema has, so a partner reading it sees every setting.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { hubConfigSchema, parseHubConfig } from '../../src/hub/config.js';

const exampleText = readFileSync('config.hub.example.yaml', 'utf8');
const example = parse(exampleText) as Record<string, unknown>;
/** Keys shown commented out (`# proxyUrl: …`): optional ones without a default. */
const commentedKeys = new Set([...exampleText.matchAll(/^\s*#\s*([A-Za-z]+):/gm)].map((m) => m[1]!));
const credentials = { CREDENTIALS_DIRECTORY: '' };

/** Dotted key paths of a plain document. */
function paths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const obj = value as Record<string, unknown>;
  // A secret source ({ file }, { env }, { credential }) is a value, not a section.
  if (Object.keys(obj).length === 1 && ['file', 'env', 'credential'].includes(Object.keys(obj)[0]!)) return [];
  return Object.entries(obj).flatMap(([k, v]) => [`${prefix}${k}`, ...paths(v, `${prefix}${k}.`)]);
}

/** Dotted key paths of a zod object schema (sections descended into). */
function schemaPaths(schema: z.ZodType, prefix = ''): string[] {
  let s: z.ZodType = schema;
  // Defaults, prefaults and optionals wrap the object they describe.
  while ('unwrap' in s && typeof s.unwrap === 'function') s = s.unwrap() as z.ZodType;
  const def = (s as { def?: { innerType?: z.ZodType } }).def;
  if (!(s instanceof z.ZodObject) && def?.innerType) return schemaPaths(def.innerType, prefix);
  if (!(s instanceof z.ZodObject)) return [];
  return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([k, v]) => [`${prefix}${k}`, ...schemaPaths(v, `${prefix}${k}.`)]);
}

describe('config.hub.example.yaml', () => {
  it('parses with the hub schema once its secrets are given', () => {
    const env = { ...credentials, WATTSHIFT_HUB_DATABASE_URL: 'postgres://hub:pw@127.0.0.1:5432/hub' };
    const doc = structuredClone(example) as Record<string, Record<string, unknown>>;
    // Credentials come from systemd in production; here they are given inline.
    doc['spark']!['clientSecret'] = 'secret';
    doc['broker']!['password'] = 'secret';
    doc['webhook']!['secret'] = 'secret';
    const { config } = parseHubConfig(doc, { env });
    expect(config.database.url).toBe(env.WATTSHIFT_HUB_DATABASE_URL);
    expect(config.broker.topicPrefix).toBe('wattshift/fleet/v1');
  });

  it('shows every key of the schema, set or commented out', () => {
    const shown = new Set(paths(example));
    const missing = schemaPaths(hubConfigSchema).filter((p) => !shown.has(p) && !commentedKeys.has(p.split('.').at(-1)!));
    expect(missing).toEqual([]);
  });
});
