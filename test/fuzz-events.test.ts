/**
 * Property-based fuzzing of the event boundary: the wire schemas (webhook body, polled events,
 * report requests) and the event intake with a real SQLite store. Inputs are arbitrary JSON and
 * mutations of the valid examples (fields dropped, retyped, duplicated, unknown keys and payload
 * types, long arrays). Nothing may throw except the documented zod error, and an input the intake
 * rejects as invalid must not write a row.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mutate, type Json, type Mutation } from './helpers/json-mutation.js';
import { ZodError, type z } from 'zod';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { openStore, type Store } from '../src/store/index.js';
import { createEventIntake } from '../src/jobs/event-intake.js';
import type { IntakeOutcome } from '../src/upstream/port.js';
import { parseIncoming, type HomeEvent, type Identity } from '../src/spark/event-normalise.js';
import { eventNotificationSchema, eventSchema, eventsPageSchema, reportRequestSchema } from '../src/spark/wire.js';

// ---------------------------------------------------------------------------------------------
// Valid examples: the vendor's webhook test data and the example bodies in test/fixtures/spark

const webhookDir = fileURLToPath(new URL('../spec/webhook-test-data/', import.meta.url));
const webhookBodies = readdirSync(webhookDir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(webhookDir, f), 'utf8')) as Json);
const research = JSON.parse(readFileSync(fileURLToPath(new URL('./fixtures/spark/research-examples.json', import.meta.url)), 'utf8')) as {
  examples: { schema: string; body: Json }[];
};
const bodiesFor = (schema: string): Json[] => research.examples.filter((e) => e.schema === schema).map((e) => e.body);

const notifications = [...webhookBodies, ...bodiesFor('eventNotificationSchema')];
const pages = bodiesFor('eventsPageSchema');
const events: Json[] = pages.flatMap((p) => (p as { events: Json[] }).events);
const reports = bodiesFor('reportRequestSchema');

const schemas: [string, z.ZodType, Json[]][] = [
  ['eventSchema', eventSchema, events],
  ['eventNotificationSchema', eventNotificationSchema, notifications],
  ['reportRequestSchema', reportRequestSchema, reports],
  ['eventsPageSchema', eventsPageSchema, pages],
];

// ---------------------------------------------------------------------------------------------
// Mutations

const knownPayloadTypes = ['PriceCurve', 'UserEligibility', 'LocationLPC', 'ResourceLPC', 'LPCReservation', 'Unknown'];
/**
 * Longest array a mutation builds. Kept well below ~125 000 elements: beyond that, `span()` in
 * src/spark/event-normalise.ts overflows the stack (`Math.min(...points)`); see the report of the
 * fuzzing change. The wire schemas themselves are checked with 200 000 elements below.
 */
const maxLongArray = 3_000;

const jsonArb = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constantFrom('delete' as const, 'duplicate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('retype' as const), at: fc.nat(), value: jsonArb }),
  fc.record({
    op: fc.constant('unknownKey' as const),
    at: fc.nat(),
    key: fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'prototype', 'payloadType', 'id')),
    value: jsonArb,
  }),
  fc.record({ op: fc.constant('payloadType' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom(...knownPayloadTypes), fc.string()) }),
);
/** At most one long array per body, applied last (two nested ones would make millions of nodes). */
const longArrayArb = fc.option(
  fc.record({ op: fc.constant('longArray' as const), at: fc.nat(), length: fc.integer({ min: 0, max: maxLongArray }) }),
  {
    freq: 4,
  },
);

const mutated = (bodies: Json[]): fc.Arbitrary<Json> =>
  fc
    .tuple(fc.constantFrom(...bodies), fc.array(mutationArb, { minLength: 1, maxLength: 4 }), longArrayArb)
    .map(([b, ms, long]) => mutate(b, long ? [...ms, long] : ms));

/** JSON text with awkward keys, parsed as a server would parse a body. */
const trickyJsonText = fc
  .array(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'payloadType', 'id', 'eventId'), jsonArb), {
    maxLength: 4,
  })
  .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);

function assertPrototypesClean(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(objectProtoNames);
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
}
const objectProtoNames = Object.getOwnPropertyNames(Object.prototype).sort();

// ---------------------------------------------------------------------------------------------

describe('wire schemas under fuzzing', () => {
  it('has valid examples of every schema, and they parse', () => {
    for (const [name, schema, bodies] of schemas) {
      expect(bodies.length, name).toBeGreaterThan(0);
      for (const b of bodies) expect(schema.safeParse(b).success, `${name}: ${JSON.stringify(b).slice(0, 80)}`).toBe(true);
    }
  });

  it('safeParse never throws on arbitrary JSON, and arbitrary JSON is not a report', () => {
    fc.assert(
      fc.property(jsonArb, (value) => {
        for (const [, schema] of schemas) {
          const r = schema.safeParse(value);
          expect(typeof r.success).toBe('boolean');
          if (!r.success) expect(r.error).toBeInstanceOf(ZodError);
        }
        // A report request needs a non-empty eventId and a known payload: random JSON never is one.
        expect(reportRequestSchema.safeParse(value).success).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('safeParse never throws on mutated valid bodies (dropped, retyped, duplicated, unknown fields and types, long arrays)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: schemas.length - 1 }).chain((i) => fc.tuple(fc.constant(i), mutated(schemas[i]![2]))),
        ([i, value]) => {
          const [, schema] = schemas[i]!;
          const r = schema.safeParse(value);
          if (!r.success) {
            expect(r.error).toBeInstanceOf(ZodError);
            expect(r.error.issues.length).toBeGreaterThan(0);
          }
          assertPrototypesClean();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('JSON bodies with __proto__ / constructor keys parse without polluting prototypes', () => {
    fc.assert(
      fc.property(trickyJsonText, (text) => {
        const value: unknown = JSON.parse(text);
        for (const [, schema] of schemas) schema.safeParse(value);
        for (const kind of ['event', 'notification'] as const) {
          try {
            parseIncoming(value, kind, me);
          } catch (err) {
            expect(err).toBeInstanceOf(ZodError);
          }
        }
        assertPrototypesClean();
      }),
      { numRuns: 200 },
    );
  });

  it('a body with 200 000 points parses (no recursion limit in the schemas)', () => {
    const base = structuredClone(notifications[0]) as { payload: { priceCurveDelta: { points: Json[] } } };
    const point = base.payload.priceCurveDelta.points[0] as Json;
    base.payload.priceCurveDelta.points = Array.from({ length: 200_000 }, () => point);
    expect(eventNotificationSchema.safeParse(base).success).toBe(true);
    const page = {
      pagination: { totalRecords: 1, pageSize: 1, currentPage: 1 },
      events: Array.from({ length: 50_000 }, (_, i) => ({ id: `e${i}`, payload: null })),
    };
    expect(eventsPageSchema.safeParse(page).success).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Normalising and intake

const me: Identity = {
  userId: 'user-0001',
  locationId: 'loc-home-01',
  resources: new Map([
    ['res-waterheater-01', 'tank'],
    ['res-evcharger-01', 'ev'],
  ]),
  meterPointIds: ['707057500011112222'],
};

/** Any input the intake may see: arbitrary JSON, or a mutated event / notification. */
const incomingArb = fc.oneof(
  { weight: 1, arbitrary: fc.tuple(jsonArb, fc.constantFrom('event' as const, 'notification' as const)) },
  { weight: 2, arbitrary: fc.tuple(mutated(events), fc.constant('event' as const)) },
  { weight: 2, arbitrary: fc.tuple(mutated(notifications), fc.constant('notification' as const)) },
  // Valid bodies under a fresh id, so some are new and relevant.
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...events), fc.uuid()).map(([e, id]) => [{ ...(e as object), id }, 'event' as const] as [Json, 'event']),
  },
);

function checkHomeEvent(e: HomeEvent): void {
  expect(Number.isFinite(e.createdAtMs)).toBe(true);
  for (const t of [e.startMs, e.endMs]) if (t !== null) expect(Number.isFinite(t)).toBe(true);
  if (e.startMs !== null && e.endMs !== null) expect(e.startMs).toBeLessThanOrEqual(e.endMs);
  expect(e.startMs === null).toBe(e.endMs === null);
  for (const c of e.lpcCaps) {
    expect(Number.isFinite(c.startMs)).toBe(true);
    expect(c.durationMs).toBeGreaterThan(0);
  }
  for (const p of e.priceDeltas) expect(p.durationMs).toBeGreaterThan(0);
}

describe('parseIncoming under fuzzing', () => {
  it('returns a consistent HomeEvent or throws a ZodError, nothing else', () => {
    fc.assert(
      fc.property(incomingArb, ([raw, kind]) => {
        let event: HomeEvent;
        try {
          event = parseIncoming(raw, kind, me);
        } catch (err) {
          expect(err).toBeInstanceOf(ZodError);
          return;
        }
        checkHomeEvent(event);
        // Only this home's targets are kept: its resources, or (price curves) its own location.
        for (const r of event.resourceIds) expect(me.resources.has(r) || event.locationIds.includes(me.locationId!)).toBe(true);
        for (const c of event.lpcCaps) {
          if (c.resourceId === null) expect(c.locationId).toBe(me.locationId);
          else expect(me.resources.has(c.resourceId)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('event intake under fuzzing (real SQLite store)', () => {
  let dir: string;
  let store: Store;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ws-fuzz-intake-'));
    store = openStore({ path: join(dir, 'db.sqlite') });
  });
  afterAll(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers new/duplicate/ignored/refused/invalid, never throws, and writes exactly what it says', () => {
    const handed: HomeEvent[] = [];
    const intake = createEventIntake({
      store,
      identity: () => me,
      clock: new ManualClock(Date.UTC(2025, 5, 1, 12)),
      logger: silentLogger(),
      onEvent: (e) => void handed.push(e),
    });
    const outcomes = new Map<IntakeOutcome, number>();
    fc.assert(
      fc.property(incomingArb, fc.boolean(), ([raw, kind], twice) => {
        const before = store.listEvents();
        const handedBefore = handed.length;
        const r = intake.accept(raw, kind);
        outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
        // refused: stored (as ignored) for values out of bounds; fuzzed prices reach those.
        expect(['new', 'duplicate', 'ignored', 'refused', 'invalid']).toContain(r.outcome);
        const after = store.listEvents();
        if (r.outcome === 'invalid' || r.outcome === 'duplicate') {
          expect(after).toEqual(before);
          expect(handed.length).toBe(handedBefore);
          if (r.outcome === 'invalid') expect(r.event).toBeUndefined();
          return;
        }
        const id = r.event!.id;
        expect(after.length).toBe(before.length + 1);
        expect(before.some((e) => e.eventId === id)).toBe(false);
        const row = store.getEvent(id)!;
        expect(row.state).toBe(r.outcome === 'new' ? 'received' : 'ignored');
        expect(handed.length).toBe(handedBefore + (r.outcome === 'new' ? 1 : 0));
        if (twice) {
          // The same body again is a duplicate and changes nothing.
          const again = intake.accept(raw, kind);
          expect(again.outcome).toBe('duplicate');
          expect(store.listEvents()).toEqual(after);
        }
      }),
      {
        numRuns: 150,
        // One of each outcome whatever the seed: new (twice: then a duplicate), ignored, invalid.
        examples: [
          [[{ ...(events[1] as object), id: 'example-new' }, 'event'], true],
          [[{ id: 'example-other', payload: { payloadType: 'SomethingNew' } }, 'event'], false],
          [[{ id: 42 }, 'event'], false],
        ],
      },
    );
    // The generators reach every outcome (else the property would prove little).
    expect([...outcomes.keys()].filter((o) => o !== 'refused').sort()).toEqual(['duplicate', 'ignored', 'invalid', 'new']);
  });

  it('an event with more points than the stack can spread gets a typed outcome and no partial row', () => {
    const e = structuredClone(events.find((x) => JSON.stringify(x).includes('"PriceCurve"'))) as {
      id: string;
      payload: { priceCurveDelta: { points: Json[] } };
    };
    e.id = 'huge-curve';
    e.payload.priceCurveDelta.points = Array.from({ length: 200_000 }, (_, i) => ({
      price: 1,
      timestamp: new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString(),
    }));
    const intake = createEventIntake({ store, identity: () => me, clock: new ManualClock(0), logger: silentLogger(), onEvent: () => {} });
    const before = store.listEvents().length;
    const r = intake.accept(e, 'event');
    // 200,000 points is far beyond any real curve: stored and refused when it targets this home.
    expect(['refused', 'ignored', 'invalid']).toContain(r.outcome);
    expect(store.listEvents().length).toBe(before + (r.outcome === 'invalid' ? 0 : 1));
  });
});
