/**
 * A charging session kept across a restart of the daemon: when the car was plugged in, where the
 * charger's energy counter stood then, and the tag that named the car. Without it a restart plans
 * the car from when the new run first saw it (a later plug-in time for the bill's baseline, the
 * car's card forgotten once a go-e session's `trx` has turned null).
 */
import { z } from 'zod';
import type { EvState } from '../ports.js';
import type { Store } from '../store/types.js';

export type SessionTag = Pick<EvState, 'idTag' | 'goeCard'>;

export interface StoredEvSession {
  startMs: number;
  /** The charger's energy counter at the session's start, kWh (null: the charger gave none). */
  startKwh: number | null;
  tag: SessionTag | null;
}

const storedSessionSchema = z
  .strictObject({
    startMs: z.number(),
    startKwh: z.number().nullable(),
    tag: z.strictObject({ idTag: z.string().optional(), goeCard: z.number().optional() }).nullable(),
  })
  .nullable();

/**
 * Counters read back within this of each other are the same reading: OCPP counts in Wh, go-e's
 * session energy in hundredths of a Wh, and a restart re-derives the start from a fresh reading.
 */
export const sameCounterKwh = 0.01;

/** What the charger tells at the first reading after a restart. */
export interface FirstReading {
  plugged: boolean;
  /** The charger's energy counter, kWh. */
  energyKwh: number | undefined;
  /** The energy of the charger's own session, where it counts one (OCPP's meterStart, go-e's `wh`). */
  sessionKwh: number | undefined;
}

/**
 * Whether the stored session is the one the charger has now. A charger that counts its session
 * says where it began; one that does not can only show its counter has not gone back, so a car
 * unplugged and plugged in again while the daemon was down looks like the same session there.
 * Pure.
 */
export function continuesStoredSession(stored: StoredEvSession, now: FirstReading): boolean {
  if (!now.plugged) return false;
  if (stored.startKwh === null || now.energyKwh === undefined) return true;
  if (now.sessionKwh !== undefined) return Math.abs(now.energyKwh - now.sessionKwh - stored.startKwh) <= sameCounterKwh;
  return now.energyKwh >= stored.startKwh - sameCounterKwh;
}

const keyOf = (chargerId: string): string => `ev-session:${chargerId}`;

/** The sessions in the store's key/value state, one row per charger, written only when a session starts, is named or ends. */
export function evSessionMemory(store: Pick<Store, 'getState' | 'setState'>) {
  return {
    get: (chargerId: string): StoredEvSession | undefined => store.getState(keyOf(chargerId), storedSessionSchema) ?? undefined,
    save: (chargerId: string, session: StoredEvSession): void => store.setState(keyOf(chargerId), session),
    end: (chargerId: string): void => store.setState(keyOf(chargerId), null),
  };
}
export type EvSessionMemory = ReturnType<typeof evSessionMemory>;
