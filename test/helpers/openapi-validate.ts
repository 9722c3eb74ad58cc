/**
 * Validates every response the sandbox gives against an OpenAPI 3.0 document, with the
 * `openapi-response-validator` library (ajv 8 underneath; formats from ajv-formats).
 *
 * Documents: the provider's Energy Coordination document (spec/
 * ec-sandbox-swagger.json) for `/energy-coordination/v1`, and our reconstruction of the token
 * endpoint and the forecast service (test/fixtures/sandbox/auxiliary-openapi.json).
 *
 * One documented normalisation of the provider's document: Swashbuckle writes polymorphism as
 * a base schema with a discriminator (`SparkEventPayload`, `SparkReportPayload`) plus subtypes
 * that `allOf` the base, and puts `additionalProperties: false` on both. Read literally no
 * payload can validate (the base forbids `targets`, the subtype forbids `payloadType`). As the
 * generator means it, each subtype gets the base's properties merged in with `payloadType`
 * pinned to its discriminator value, and a bare reference to a base becomes `oneOf` its
 * subtypes. Nothing else is changed.
 *
 * Statuses the document does not declare are accepted only in these cases, all of which are
 * ours and are in docs/sandbox.md: 401 (empty body, `WWW-Authenticate: Bearer`), 404 for an
 * unknown route, 405 (with `Allow`), 413, and 400 on an operation that declares no 400 -
 * each (but 401) an `application/problem+json` HttpValidationProblemDetails.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import * as responseValidatorModule from 'openapi-response-validator';
import type { ResponseRecord, Sandbox } from '../../src/sandbox/server.js';

type Json = Record<string, unknown>;
interface Validator {
  validateResponse(status: string | number, body: unknown): undefined | { message: string; errors?: unknown[] };
}
type ValidatorCtor = new (args: Json) => Validator;
const mod = responseValidatorModule as unknown as { default: ValidatorCtor | { default: ValidatorCtor } };
const ResponseValidator: ValidatorCtor = 'default' in mod.default ? mod.default.default : mod.default;

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
export const ecDocumentPath = resolve(repoRoot, 'spec/ec-sandbox-swagger.json');
export const auxDocumentPath = resolve(repoRoot, 'test/fixtures/sandbox/auxiliary-openapi.json');

/** The .NET formats Swashbuckle writes, which no JSON Schema format library knows. */
const dotNetFormats: Record<string, (value: string) => boolean> = {
  'time-span': (v) => /^(\d+\.)?\d{1,2}:\d{2}:\d{2}(\.\d{1,7})?$/.test(v),
  int32: () => true,
  int64: () => true,
  double: () => true,
};

/** Every `format` a document names. */
function formatsIn(doc: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(doc)) for (const item of doc) formatsIn(item, found);
  else if (doc && typeof doc === 'object') {
    for (const [key, value] of Object.entries(doc)) {
      if (key === 'format' && typeof value === 'string') found.add(value);
      else formatsIn(value, found);
    }
  }
  return found;
}

/**
 * A check per format the documents name: the .NET ones above, the rest from ajv-formats (its
 * full mode) through a compiled `{ type: 'string', format }` schema. A format neither knows
 * makes ajv throw here, so none goes unchecked.
 */
function customFormats(...docs: Json[]): Record<string, (value: string) => boolean> {
  const ajv = new Ajv();
  addFormats.default(ajv, { mode: 'full' });
  const out: Record<string, (value: string) => boolean> = {};
  for (const doc of docs) {
    for (const name of formatsIn(doc)) {
      if (name in out) continue;
      const dotNet = dotNetFormats[name];
      if (dotNet) out[name] = dotNet;
      else {
        const check = ajv.compile({ type: 'string', format: name });
        out[name] = (v) => check(v);
      }
    }
  }
  return out;
}

/** The Swashbuckle inheritance normalisation described above. */
export function normaliseInheritance(doc: Json): Json {
  const copy = JSON.parse(JSON.stringify(doc)) as Json;
  const schemas = ((copy.components as Json).schemas ?? {}) as Record<string, Json>;
  const bases = new Map<string, Record<string, string>>();
  for (const [name, s] of Object.entries(schemas)) {
    const d = s.discriminator as { mapping?: Record<string, string> } | undefined;
    if (d?.mapping) bases.set(name, d.mapping);
  }
  for (const [baseName, mapping] of bases) {
    const base = schemas[baseName] as Json;
    for (const [value, ref] of Object.entries(mapping)) {
      const sub = schemas[ref.split('/').pop() ?? ''];
      if (!sub) continue;
      sub.allOf = ((sub.allOf as Json[] | undefined) ?? []).filter((a) => a.$ref !== `#/components/schemas/${baseName}`);
      if ((sub.allOf as Json[]).length === 0) delete sub.allOf;
      sub.properties = { ...(base.properties as Json), ...(sub.properties as Json), payloadType: { type: 'string', enum: [value] } };
      sub.required = [...new Set([...((sub.required as string[]) ?? []), 'payloadType'])];
    }
    schemas[baseName] = { oneOf: Object.values(mapping).map((ref) => ({ $ref: ref })) };
  }
  return copy;
}

interface Operation {
  method: string;
  segments: string[];
  responses: Record<string, Json>;
  validator: Validator;
}

function loadOperations(doc: Json, prefix: string, formats: Record<string, (value: string) => boolean>): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      const responses = (op as Json).responses as Record<string, Json>;
      ops.push({
        method: method.toUpperCase(),
        segments: (prefix + path).split('/').filter(Boolean),
        responses,
        validator: new ResponseValidator({ responses, components: doc.components as Json, customFormats: formats }),
      });
    }
  }
  return ops;
}

function findOperation(ops: Operation[], method: string, path: string): Operation | undefined {
  const parts = path.split('/').filter(Boolean);
  let best: { op: Operation; score: string } | undefined;
  for (const op of ops) {
    if (op.method !== method || op.segments.length !== parts.length) continue;
    let score = '';
    let ok = true;
    op.segments.forEach((s, i) => {
      if (s.startsWith('{')) score += '0';
      else if (s.toLowerCase() === (parts[i] ?? '').toLowerCase()) score += '1';
      else ok = false;
    });
    if (ok && (!best || score > best.score)) best = { op, score };
  }
  return best?.op;
}

const ecDoc = normaliseInheritance(JSON.parse(readFileSync(ecDocumentPath, 'utf8')) as Json);
const auxDoc = JSON.parse(readFileSync(auxDocumentPath, 'utf8')) as Json;
const formats = customFormats(ecDoc, auxDoc);
const operations = [...loadOperations(ecDoc, '/energy-coordination/v1', formats), ...loadOperations(auxDoc, '', formats)];
const problemValidator = new ResponseValidator({
  responses: {
    default: {
      description: 'problem',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/HttpValidationProblemDetails' } } },
    },
  },
  components: ecDoc.components as Json,
  customFormats: formats,
});
const schemaValidators = new Map<string, Validator>();

/** Validates a value against one component schema of the provider's document. */
export function validateComponent(schemaName: string, value: unknown): string[] {
  let v = schemaValidators.get(schemaName);
  if (!v) {
    v = new ResponseValidator({
      responses: { 200: { description: 'x', content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName}` } } } } },
      components: ecDoc.components as Json,
      customFormats: formats,
    });
    schemaValidators.set(schemaName, v);
  }
  const r = v.validateResponse(200, value);
  return r ? [JSON.stringify(r.errors ?? r.message)] : [];
}

/**
 * The sandbox's own routes that answer as a documented one does (docs/sandbox.md): a reservation
 * is made with a location LPC's body and answered with its shape.
 */
const extensionRoutes: ReadonlyArray<[RegExp, string]> = [[/\/simulation\/events\/lpc\/reservations$/i, '/simulation/events/lpc/locations']];
const documentedPathOf = (path: string): string => extensionRoutes.reduce((p, [from, to]) => p.replace(from, to), path);

/** Problems with one response, or [] when it conforms. */
export function checkResponse(r: Pick<ResponseRecord, 'method' | 'path' | 'status' | 'headers' | 'body'>): string[] {
  const where = `${r.method} ${r.path} -> ${r.status}`;
  const contentType = (r.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  let body: unknown = null;
  if (r.body !== '') {
    try {
      body = JSON.parse(r.body);
    } catch {
      return [`${where}: body is not JSON`];
    }
  }
  const op = findOperation(operations, r.method, documentedPathOf(r.path));
  const declared = op?.responses[String(r.status)];
  if (op && declared) {
    const content = declared.content as Record<string, { schema?: Json }> | undefined;
    const types = Object.keys(content ?? {});
    if (types.length === 0) return r.body === '' ? [] : [`${where}: the document declares no body, got ${r.body.slice(0, 80)}`];
    if (!types.includes(contentType)) return [`${where}: content type ${contentType || '(none)'} is not one of ${types.join(', ')}`];
    const result = op.validator.validateResponse(r.status, body);
    return result ? [`${where}: ${JSON.stringify(result.errors ?? result.message)} body=${r.body.slice(0, 300)}`] : [];
  }
  // Undeclared statuses: only the documented extensions of the sandbox.
  if (r.status === 401)
    return r.body === '' && /^Bearer/.test(r.headers['www-authenticate'] ?? '') ? [] : [`${where}: 401 must be empty with WWW-Authenticate: Bearer`];
  const allowed = r.status === 405 || r.status === 413 || (r.status === 404 && !op) || (r.status === 400 && op !== undefined && !op.responses['400']);
  if (!allowed) return [`${where}: status not declared by the document`];
  if (r.status === 405 && !r.headers.allow) return [`${where}: 405 without Allow`];
  if (contentType !== 'application/problem+json') return [`${where}: expected application/problem+json`];
  const result = problemValidator.validateResponse(r.status, body);
  return result ? [`${where}: ${JSON.stringify(result.errors)}`] : [];
}

export interface ResponseAudit {
  /** Every response seen so far. */
  records: ResponseRecord[];
  /** Every problem found so far (empty = all conform). */
  failures: string[];
  stop(): void;
}

/** Records and validates every response the sandbox sends from now on. */
export function auditResponses(sandbox: Sandbox): ResponseAudit {
  const audit: ResponseAudit = { records: [], failures: [], stop: () => undefined };
  audit.stop = sandbox.onResponse((r) => {
    audit.records.push(r);
    audit.failures.push(...checkResponse(r));
  });
  return audit;
}
