import { describe, expect, it } from 'vitest';
import { continuesStoredSession, type FirstReading, type StoredEvSession } from './ev-session-memory.js';

const stored: StoredEvSession = { startMs: 0, startKwh: 100, tag: null };

describe('whether the session stored before a restart is the one the charger has now', () => {
  it.each<[string, StoredEvSession, FirstReading, boolean]>([
    ['the car is gone', stored, { plugged: false, energyKwh: 104, sessionKwh: undefined }, false],
    ['the charger counts its session and it began where the stored one did', stored, { plugged: true, energyKwh: 104.7, sessionKwh: 4.7 }, true],
    [
      'the charger counts its session from a counter 5 Wh off (a rounding of the stored start)',
      stored,
      { plugged: true, energyKwh: 104.705, sessionKwh: 4.7 },
      true,
    ],
    ['the charger counts a session that began later: the car was plugged in again', stored, { plugged: true, energyKwh: 110, sessionKwh: 1 }, false],
    ['the charger counts no session and its counter went on', stored, { plugged: true, energyKwh: 112, sessionKwh: undefined }, true],
    [
      'the charger counts no session and its counter went back (a new meter, a reset)',
      stored,
      { plugged: true, energyKwh: 3, sessionKwh: undefined },
      false,
    ],
    ['the charger gives no counter', stored, { plugged: true, energyKwh: undefined, sessionKwh: undefined }, true],
    ['the stored session had no counter', { ...stored, startKwh: null }, { plugged: true, energyKwh: 50, sessionKwh: 2 }, true],
  ])('%s', (_name, s, now, expected) => {
    expect(continuesStoredSession(s, now)).toBe(expected);
  });
});
