/**
 * Values that a JSON schema of the OCPP 1.6 JSON set allows, as fast-check arbitraries: the
 * keywords those schemas use (type, properties, required, additionalProperties, enum, maxLength,
 * format date-time/uri, items, minItems, multipleOf, $ref to definitions). Optional properties are
 * sometimes left out; strings stay within maxLength; numbers are whole (a multiple of any
 * multipleOf the set uses, 0.1).
 */
import fc from 'fast-check';
import type { Json } from './json-mutation.js';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: Json[];
  maxLength?: number;
  format?: string;
  items?: JsonSchema;
  minItems?: number;
  $ref?: string;
  definitions?: Record<string, JsonSchema>;
}

/** Longest arrays generated (the schemas set no maxItems; a charge point sends a handful). */
const maxItems = 4;

const dateTime = fc
  .date({ min: new Date(Date.UTC(1970, 0, 1)), max: new Date(Date.UTC(2100, 0, 1)), noInvalidDate: true })
  .map((d) => d.toISOString());

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  if (s.format === 'date-time') return dateTime;
  if (s.format === 'uri') return fc.webUrl();
  const maxLength = s.maxLength ?? 64;
  return fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }).filter((x) => x.length <= maxLength),
  );
}

/** An arbitrary of the values `schema` allows; `root` holds the definitions `$ref`s point into. */
export function schemaArbitrary(schema: JsonSchema, root: JsonSchema = schema): fc.Arbitrary<Json> {
  if (schema.$ref) {
    const name = schema.$ref.replace(/^#\/definitions\//, '');
    const target = root.definitions?.[name];
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
    return schemaArbitrary(target, root);
  }
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringArb(schema);
    case 'integer':
      return fc.oneof(fc.integer({ min: -5, max: 100 }), fc.integer());
    case 'number':
      return fc.integer({ min: -1_000_000, max: 1_000_000 });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(schemaArbitrary(schema.items ?? {}, root), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(maxItems, schema.minItems ?? 0),
      });
    case 'object': {
      const props = schema.properties ?? {};
      const required = schema.required ?? [];
      const arbs = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, schemaArbitrary(v, root)]));
      return fc.record(arbs, { requiredKeys: required.filter((k) => k in arbs) }) as fc.Arbitrary<Json>;
    }
    default:
      return fc.constant({});
  }
}
