/** The schema walker on a small schema with every wrapper and container the config uses. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeType, discriminatorValue, keysAt, listFields, unwrap } from './walk.js';

const tcp = z.strictObject({ type: z.literal('tcp'), host: z.string().describe('Host.'), port: z.int().min(1).default(502) });
const rtu = z.strictObject({ type: z.literal('rtu'), path: z.string(), parity: z.enum(['none', 'even']).default('none') });
const schema = z.strictObject({
  name: z.string().min(1).describe('Name.'),
  token: z
    .string()
    .meta({ description: 'Token.', secret: true })
    .nullish()
    .transform((v) => v ?? undefined),
  limits: z
    .strictObject({ maxW: z.number().positive().default(1000), steps: z.array(z.number()).default([]) })
    .prefault({})
    .describe('Limits.'),
  buses: z.array(z.discriminatedUnion('type', [tcp, rtu])).default([]),
  tags: z.record(z.string(), z.strictObject({ colour: z.string().optional() })).optional(),
  phases: z.union([z.literal(1), z.literal(3)]).default(3),
});

describe('schema walker', () => {
  it('sees through optional, nullable, default, prefault and pipe wrappers', () => {
    const token = unwrap(schema.shape.token);
    expect(token).toMatchObject({ optional: true, hasDefault: false, secret: true, description: expect.stringContaining('Token.') as string });
    expect(token.inner).toBeInstanceOf(z.ZodString);
    // A prefault's default is its input, not what parsing it would give.
    expect(unwrap(schema.shape.limits)).toMatchObject({ hasDefault: true, defaultValue: {}, description: 'Limits.' });
    expect(unwrap(schema.shape.phases)).toMatchObject({ hasDefault: true, defaultValue: 3 });
  });

  it('names leaf types for the docs', () => {
    expect(describeType(schema.shape.phases)).toBe('1 | 3');
    expect(describeType(rtu.shape.parity)).toBe('`none` | `even`');
    expect(describeType(tcp.shape.port)).toBe('integer');
    expect(describeType(schema.shape.limits.unwrap().shape.maxW)).toBe('number');
    expect(describeType(schema.shape.limits.unwrap().shape.steps)).toBe('number[]');
    expect(describeType(schema.shape.buses.unwrap().element)).toBe('one of `tcp`, `rtu`');
    expect(describeType(schema.shape.name)).toBe('string');
    expect(discriminatorValue(rtu, 'type')).toBe('rtu');
  });

  it('lists every key, with list items, map entries and union variants', () => {
    const fields = listFields(schema);
    expect(fields.map((f) => [f.path, f.type, f.required])).toEqual([
      ['name', 'string', true],
      ['token', 'string', false],
      ['limits', 'object', false],
      ['limits.maxW', 'number', false],
      ['limits.steps', 'number[]', false],
      ['buses', 'list', false],
      ['buses[]<type=tcp>.type', '"tcp"', true],
      ['buses[]<type=tcp>.host', 'string', true],
      ['buses[]<type=tcp>.port', 'integer', false],
      ['buses[]<type=rtu>.type', '"rtu"', true],
      ['buses[]<type=rtu>.path', 'string', true],
      ['buses[]<type=rtu>.parity', '`none` | `even`', false],
      ['tags', 'map', false],
      ['tags.<name>.colour', 'string', false],
      ['phases', '1 | 3', false],
    ]);
    expect(fields.find((f) => f.path === 'token')?.secret).toBe(true);
  });

  it("knows the keys at a path, every variant's for a union", () => {
    expect(keysAt(schema, [])).toEqual(['name', 'token', 'limits', 'buses', 'tags', 'phases']);
    expect(keysAt(schema, ['buses', 0])).toEqual(['type', 'host', 'port', 'path', 'parity']);
    expect(keysAt(schema, ['tags', 'garage'])).toEqual(['colour']);
    expect(keysAt(schema, ['name'])).toEqual([]);
  });
});
