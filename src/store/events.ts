import { z } from 'zod';
import type { StoreContext } from './context.js';
import type { Store } from './types.js';
import { msInput, msRow, roundMs } from './time.js';
import { checkInput, guard, parseRow, stringArrayJson } from './errors.js';
import { eventStates, type EventRow } from './types.js';

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const eventInputSchema = z.strictObject({
  eventId: z.string().min(1),
  notificationType: z.string().nullish(),
  payloadType: z.string().nullish(),
  createdAtMs: msInput,
  receivedAtMs: msInput,
  startMs: msInput.nullish(),
  endMs: msInput.nullish(),
  locationIds: z.array(z.string()).readonly().optional(),
  resourceIds: z.array(z.string()).readonly().optional(),
  rawJson: z.string().refine(isJson, 'not valid JSON'),
  state: z.enum(eventStates).optional(),
});

const eventRowSchema = z
  .strictObject({
    eventId: z.string(),
    notificationType: z.string().nullable(),
    payloadType: z.string().nullable(),
    createdAtMs: msRow,
    receivedAtMs: msRow,
    startMs: msRow.nullable(),
    endMs: msRow.nullable(),
    locationIds: stringArrayJson,
    resourceIds: stringArrayJson,
    rawJson: z.string(),
    state: z.enum(eventStates),
    stateDetail: z.string().nullable(),
    updatedAtMs: msRow,
  })
  .transform((row, ctx): EventRow => {
    try {
      return { ...row, raw: JSON.parse(row.rawJson) as unknown };
    } catch {
      ctx.addIssue({ code: 'custom', path: ['rawJson'], message: 'not valid JSON' });
      return z.NEVER;
    }
  });

const columns = `event_id AS eventId, notification_type AS notificationType, payload_type AS payloadType,
  created_at_ms AS createdAtMs, received_at_ms AS receivedAtMs, start_ms AS startMs, end_ms AS endMs,
  location_ids AS locationIds, resource_ids AS resourceIds, raw_json AS rawJson, state,
  state_detail AS stateDetail, updated_at_ms AS updatedAtMs`;

/** This table's part of the {@link Store} (its documentation is there). */
export type EventsTable = Pick<Store, 'saveEvent' | 'getEvent' | 'hasEvent' | 'listEvents' | 'markEvent'>;

export function eventsTable(ctx: StoreContext): EventsTable {
  const { db } = ctx;
  const insert = db.prepare(`INSERT INTO events (event_id, notification_type, payload_type, created_at_ms,
      received_at_ms, start_ms, end_ms, location_ids, resource_ids, raw_json, state, updated_at_ms)
    VALUES (@eventId, @notificationType, @payloadType, @createdAtMs, @receivedAtMs, @startMs, @endMs,
      @locationIds, @resourceIds, @rawJson, @state, @updatedAtMs)
    ON CONFLICT (event_id) DO NOTHING`);
  const selectOne = db.prepare(`SELECT ${columns} FROM events WHERE event_id = ?`);
  const exists = db.prepare('SELECT 1 FROM events WHERE event_id = ?').pluck();
  // The span of an event is [start, end) when it has one, else the instant createdAt.
  const selectMany = db.prepare(`SELECT ${columns} FROM events
    WHERE (@fromMs IS NULL OR coalesce(end_ms, start_ms, created_at_ms) > @fromMs
           OR coalesce(start_ms, created_at_ms) >= @fromMs)
      AND (@toMs IS NULL OR coalesce(start_ms, created_at_ms) < @toMs)
      AND (@payloadType IS NULL OR payload_type = @payloadType)
      AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
    ORDER BY coalesce(start_ms, created_at_ms), event_id`);
  const updateState = db.prepare('UPDATE events SET state = @state, state_detail = @detail, updated_at_ms = @nowMs WHERE event_id = @eventId');

  return {
    saveEvent(event) {
      const e = checkInput(eventInputSchema, event, 'event');
      return guard('saveEvent', () =>
        ctx.durable(() => {
          const info = insert.run({
            eventId: e.eventId,
            notificationType: e.notificationType ?? null,
            payloadType: e.payloadType ?? null,
            createdAtMs: e.createdAtMs,
            receivedAtMs: e.receivedAtMs,
            startMs: e.startMs ?? null,
            endMs: e.endMs ?? null,
            locationIds: JSON.stringify(e.locationIds ?? []),
            resourceIds: JSON.stringify(e.resourceIds ?? []),
            rawJson: e.rawJson,
            state: e.state ?? 'received',
            updatedAtMs: e.receivedAtMs,
          });
          return info.changes === 1;
        }),
      );
    },

    getEvent(eventId) {
      const row = guard('getEvent', () => selectOne.get(eventId));
      return row === undefined ? undefined : parseRow(eventRowSchema, row, 'events');
    },

    hasEvent(eventId) {
      return guard('hasEvent', () => exists.get(eventId) !== undefined);
    },

    listEvents(query = {}) {
      const rows = guard('listEvents', () =>
        selectMany.all({
          fromMs: query.fromMs ?? null,
          toMs: query.toMs ?? null,
          payloadType: query.payloadType ?? null,
          states: query.states === undefined ? null : JSON.stringify(query.states),
        }),
      );
      return rows.map((row) => parseRow(eventRowSchema, row, 'events'));
    },

    markEvent(eventId, state, detail = null) {
      checkInput(z.enum(eventStates), state, 'event state');
      return guard('markEvent', () =>
        ctx.durable(() => updateState.run({ eventId, state, detail, nowMs: roundMs(ctx.clock.nowMs()) }).changes === 1),
      );
    },
  };
}
