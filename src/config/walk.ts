/**
 * Reads the zod schema as data: the config docs, the example-coverage test and the secret
 * resolver all walk the same schema, so none of them can drift from it.
 */
import { z } from 'zod';

type AnySchema = z.core.$ZodType;

export interface Unwrapped {
  /** The schema under optional/nullable/default/pipe wrappers. */
  inner: AnySchema;
  optional: boolean;
  hasDefault: boolean;
  defaultValue: unknown;
  description: string | undefined;
  secret: boolean;
}

function metaOf(schema: AnySchema): { description?: string; secret?: boolean } | undefined {
  return z.globalRegistry.get(schema) as { description?: string; secret?: boolean } | undefined;
}

/**
 * The next schema inward of a wrapper, and what the wrapper says. Everything here is zod's
 * documented surface: the classes, `.unwrap()`, a pipe's `.in`, and `.def` for a default's value
 * (a prefault's is its input, which parsing would not give back).
 */
function unwrapOnce(node: AnySchema): { next: AnySchema; optional?: true; defaultValue?: unknown } | undefined {
  if (node instanceof z.ZodOptional || node instanceof z.ZodNullable) return { next: node.unwrap(), optional: true };
  if (node instanceof z.ZodDefault || node instanceof z.ZodPrefault) return { next: node.unwrap(), defaultValue: node.def.defaultValue };
  if (node instanceof z.ZodPipe) return { next: node.in };
  return undefined;
}

/** Strips wrappers, collecting what they say (outermost description wins). */
export function unwrap(schema: AnySchema): Unwrapped {
  const out: Unwrapped = { inner: schema, optional: false, hasDefault: false, defaultValue: undefined, description: undefined, secret: false };
  let node: AnySchema | undefined = schema;
  while (node) {
    const meta = metaOf(node);
    if (meta?.description !== undefined && out.description === undefined) out.description = meta.description;
    if (meta?.secret) out.secret = true;
    out.inner = node;
    const step = unwrapOnce(node);
    if (step?.optional) out.optional = true;
    if (step && 'defaultValue' in step) {
      out.hasDefault = true;
      out.defaultValue = step.defaultValue;
    }
    node = step?.next;
  }
  return out;
}

export function objectShape(schema: AnySchema): Record<string, AnySchema> | undefined {
  return schema instanceof z.ZodObject ? schema.shape : undefined;
}

export function arrayElement(schema: AnySchema): AnySchema | undefined {
  return schema instanceof z.ZodArray ? schema.element : undefined;
}

export function recordValue(schema: AnySchema): AnySchema | undefined {
  return schema instanceof z.ZodRecord ? schema.valueType : undefined;
}

/** The options of a union and, for a discriminated union, the discriminator key. */
export function unionOptions(schema: AnySchema): { options: AnySchema[]; discriminator: string | undefined } | undefined {
  if (!(schema instanceof z.ZodUnion)) return undefined;
  const discriminator = schema instanceof z.ZodDiscriminatedUnion ? schema.def.discriminator : undefined;
  return { options: [...schema.options], discriminator };
}

/** The literal value of an option's discriminator field. */
export function discriminatorValue(option: AnySchema, key: string): string | undefined {
  const field = objectShape(option)?.[key];
  if (!field) return undefined;
  const inner = unwrap(field).inner;
  if (inner instanceof z.ZodLiteral) return String([...inner.values][0]);
  if (inner instanceof z.ZodEnum) return inner.options.map(String).join('|');
  return undefined;
}

/** A short human-readable type of a leaf, for docs. */
export function describeType(schema: AnySchema): string {
  const inner = unwrap(schema).inner;
  if (inner instanceof z.ZodLiteral) return [...inner.values].map((v) => JSON.stringify(v)).join(' | ');
  if (inner instanceof z.ZodEnum) return inner.options.map((v) => `\`${String(v)}\``).join(' | ');
  const union = unionOptions(inner);
  if (union?.discriminator) return `one of ${union.options.map((o) => `\`${discriminatorValue(o, union.discriminator ?? '') ?? '?'}\``).join(', ')}`;
  if (union) return union.options.map((o) => describeType(o)).join(' | ');
  const element = arrayElement(inner);
  if (element) return `${describeType(element)}[]`;
  const value = recordValue(inner);
  if (value) return `map of ${describeType(value)}`;
  // z.int() and .int() carry an integer format (safeint, int32, …).
  if (inner instanceof z.ZodNumber) return inner.format?.includes('int') ? 'integer' : 'number';
  return inner instanceof z.ZodType ? inner.type : 'unknown';
}

/** One documented key. `path` uses `[]` for array items and `<kind=x>` for union variants. */
export interface FieldInfo {
  path: string;
  type: string;
  required: boolean;
  defaultValue: unknown;
  hasDefault: boolean;
  description: string | undefined;
  secret: boolean;
  /** A union member or object: its children are listed separately. */
  container: boolean;
}

export interface ListOptions {
  /** Unions whose options all satisfy this are listed as one key, not expanded. */
  collapse?: (option: AnySchema) => boolean;
}

/** Every key of the schema, depth first, in declaration order. */
export function listFields(schema: AnySchema, prefix = '', options: ListOptions = {}): FieldInfo[] {
  const out: FieldInfo[] = [];
  const shape = objectShape(unwrap(schema).inner);
  if (!shape) return out;
  for (const [key, child] of Object.entries(shape)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const u = unwrap(child);
    let inner = u.inner;
    let itemPath = path;
    const el = arrayElement(inner);
    if (el && objectOrUnion(el)) {
      inner = unwrap(el).inner;
      itemPath = `${path}[]`;
    }
    const rec = recordValue(inner);
    if (rec && objectOrUnion(rec)) {
      inner = unwrap(rec).inner;
      itemPath = `${path}.<name>`;
    }
    const union = unionOptions(inner);
    const collapsed = !!union && !!options.collapse && union.options.every((o) => options.collapse?.(o));
    const container = objectOrUnion(inner) && !collapsed;
    out.push({
      path,
      type: container && itemPath !== path ? (itemPath.endsWith('[]') ? 'list' : 'map') : describeType(child),
      required: !u.optional && !u.hasDefault,
      defaultValue: u.defaultValue,
      hasDefault: u.hasDefault,
      description: u.description ?? unwrap(inner).description,
      secret: u.secret,
      container,
    });
    if (collapsed) continue;
    if (union) {
      for (const option of union.options) {
        const tag = union.discriminator ? discriminatorValue(option, union.discriminator) : undefined;
        const variantPrefix = tag === undefined ? itemPath : `${itemPath}<${union.discriminator ?? ''}=${tag}>`;
        out.push(...listFields(option, variantPrefix, options));
      }
    } else if (objectShape(inner)) {
      out.push(...listFields(inner, itemPath, options));
    }
  }
  return out;
}

function objectOrUnion(schema: AnySchema): boolean {
  const inner = unwrap(schema).inner;
  if (objectShape(inner)) return true;
  const u = unionOptions(inner);
  return !!u && u.options.length > 0 && u.options.every((o) => objectShape(unwrap(o).inner) !== undefined);
}

/**
 * The keys the schema knows for the object at `path` (array indices and record keys included in
 * the path); for a union, every option's keys. Empty when the path leads to no object.
 */
export function keysAt(schema: AnySchema, path: readonly (string | number)[]): string[] {
  let nodes: AnySchema[] = [schema];
  const expand = (list: AnySchema[]): AnySchema[] =>
    list.flatMap((n) => {
      const inner = unwrap(n).inner;
      const u = unionOptions(inner);
      return u ? expand(u.options) : [inner];
    });
  for (const seg of path) {
    nodes = expand(nodes).flatMap((n): AnySchema[] => {
      const child = typeof seg === 'number' ? arrayElement(n) : (objectShape(n)?.[seg] ?? recordValue(n));
      return child ? [child] : [];
    });
  }
  return [...new Set(expand(nodes).flatMap((n) => Object.keys(objectShape(n) ?? {})))];
}
