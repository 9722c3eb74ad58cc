import { describe, expect, it } from 'vitest';
import { chargerLines, fusePlanLimitKw, fuseHeadroom, holdFuseLimit, unlimitedHold, wattsPerAmp, type FuseInput } from './fuse.js';

const base: FuseInput = {
  fuseA: 25,
  marginA: 1,
  currentsA: [10, 10, 10],
  measuredAtMs: 0,
  nowMs: 5_000,
  staleAfterMs: 30_000,
  lines: [0, 1, 2],
  chargerNowA: 0,
};

describe('wattsPerAmp and chargerLines', () => {
  it('TN 3-phase is 3·U, IT 3-phase is √3·U, 1-phase is U', () => {
    expect(wattsPerAmp('TN', 3, 230)).toBe(690);
    expect(wattsPerAmp('IT', 3, 230)).toBeCloseTo(398.37, 2);
    expect(wattsPerAmp('IT', 1, 230)).toBe(230);
    expect(wattsPerAmp('TN', 1, 230)).toBe(230);
  });
  it('a 1-phase charger loads one line on TN and two lines on IT', () => {
    expect(chargerLines('TN', 3, 1, 1)).toEqual([1]);
    expect(chargerLines('IT', 3, 1, 2)).toEqual([2, 0]);
    expect(chargerLines('IT', 3, 3, 0)).toEqual([0, 1, 2]);
    expect(chargerLines('TN', 1, 1, 0)).toEqual([0]);
  });
});

describe('fuseHeadroom', () => {
  it('the tightest line of a 3-phase charger decides, its own draw not counted as house load', () => {
    const h = fuseHeadroom({ ...base, currentsA: [30, 12, 14], chargerNowA: 10 });
    // L1: house 20 A → 25 − 1 − 20 = 4 A.
    expect(h).toEqual({ kind: 'ok', maxChargerA: 4, line: 0, lineA: 30 });
  });
  it('two chargers on the same lines split the free current, and both give back what the line is over', () => {
    // House 5 A, two chargers at 6 A each: 17 A on every line, 7 A free below 25 − 1.
    const each = { ...base, currentsA: [17, 17, 17], chargerNowA: 6, sharedBy: [2, 2, 2] };
    expect(fuseHeadroom(each)).toMatchObject({ kind: 'ok', maxChargerA: 9.5 });
    // Alone, each would take the whole 7 A (13 A), together 31 A on a 25 A fuse.
    expect(fuseHeadroom({ ...each, sharedBy: undefined })).toMatchObject({ maxChargerA: 13 });
    // Both at 13 A: 31 A, 7 A over. Each is held to what leaves the line within the fuse if the
    // other stays where it is (6 A), never above its half share.
    expect(fuseHeadroom({ ...each, currentsA: [31, 31, 31], chargerNowA: 13 })).toMatchObject({ maxChargerA: 6 });
    // A charger drawing nothing gets its share only, never a negative current.
    expect(fuseHeadroom({ ...each, currentsA: [30, 30, 30], chargerNowA: 0 })).toMatchObject({ maxChargerA: 0 });
  });
  it('room kept for a heater counts as load on every line: a charger drawing alone gives all of it back', () => {
    // House 5 A, one charger at 16 A, the other plugged but drawing nothing: 21 A a line.
    const one = { ...base, currentsA: [21, 21, 21], chargerNowA: 16, sharedBy: [2, 2, 2] };
    expect(fuseHeadroom(one)).toMatchObject({ maxChargerA: 17.5 });
    // 8.7 A kept: 5.7 A over, all of it from the one drawing (25 − 1 − 5 − 8.7), not half.
    expect(fuseHeadroom({ ...one, reservedA: 8.7 })).toMatchObject({ maxChargerA: 10.3 });
    // Both at 6 A (17 A a line, 7 A free): 8.7 A kept puts the line 1.7 A over. As for any line
    // that is over, each is held as if the other stays where it is (the hold raises them again).
    const both = fuseHeadroom({ ...one, currentsA: [17, 17, 17], chargerNowA: 6, reservedA: 8.7 });
    expect(both.kind === 'ok' && both.maxChargerA).toBeCloseTo(4.3, 9);
  });
  it('a 1-phase TN charger on L2 ignores a loaded L1', () => {
    const h = fuseHeadroom({ ...base, currentsA: [24, 5, 5], lines: chargerLines('TN', 3, 1, 1) });
    expect(h).toMatchObject({ maxChargerA: 19, line: 1 });
  });
  it('a 1-phase IT charger between L3 and L1 is held by L1', () => {
    const h = fuseHeadroom({ ...base, currentsA: [20, 3, 8], lines: chargerLines('IT', 3, 1, 2), chargerNowA: 6 });
    expect(h).toMatchObject({ maxChargerA: 10, line: 0 });
  });
  it('never negative: a house over the fuse leaves the charger 0 A', () => {
    expect(fuseHeadroom({ ...base, currentsA: [28, 10, 10] })).toMatchObject({ maxChargerA: 0, line: 0 });
  });
  it('a stale, missing or incomplete reading gives no headroom credit', () => {
    expect(fuseHeadroom({ ...base, measuredAtMs: -40_000 })).toEqual({ kind: 'unknown', why: 'stale' });
    expect(fuseHeadroom({ ...base, measuredAtMs: undefined })).toEqual({ kind: 'unknown', why: 'stale' });
    expect(fuseHeadroom({ ...base, currentsA: [10] })).toEqual({ kind: 'unknown', why: 'missing', line: 1 });
    // An IT meter without I2 (Aron connection): the lines it does measure are not enough.
    expect(fuseHeadroom({ ...base, currentsA: [10, NaN, 10] })).toEqual({ kind: 'unknown', why: 'missing', line: 1 });
    // A 1-phase charger between L3 and L1 on IT does not need L2.
    expect(fuseHeadroom({ ...base, currentsA: [10, NaN, 12], lines: chargerLines('IT', 3, 1, 2) })).toMatchObject({ kind: 'ok', line: 2 });
  });
});

describe('holdFuseLimit', () => {
  it('lowers at once, raises only after the headroom stayed above for the whole while, to its least value', () => {
    let h = holdFuseLimit(unlimitedHold, 16, 0, 60_000);
    expect(h.limitA).toBe(16);
    h = holdFuseLimit(h, 6, 10_000, 60_000);
    expect(h.limitA).toBe(6);
    h = holdFuseLimit(h, 14, 20_000, 60_000);
    h = holdFuseLimit(h, 12, 50_000, 60_000);
    expect(h.limitA).toBe(6);
    h = holdFuseLimit(h, 16, 80_000, 60_000);
    expect(h.limitA).toBe(12);
  });
  it('a dip below the limit restarts the while', () => {
    let h = holdFuseLimit(unlimitedHold, 6, 0, 60_000);
    h = holdFuseLimit(h, 14, 10_000, 60_000);
    h = holdFuseLimit(h, 5, 40_000, 60_000);
    h = holdFuseLimit(h, 14, 50_000, 60_000);
    h = holdFuseLimit(h, 14, 100_000, 60_000);
    expect(h.limitA).toBe(5);
    expect(holdFuseLimit(h, 14, 110_000, 60_000).limitA).toBe(14);
  });
  it("the plan's limit under the fuse: the balanced load it carries, less what 1-phase heaters cost their lines", () => {
    const it25 = { supply: 'IT' as const, phases: 3 as const, mainFuseA: 25, marginA: 2 };
    // IT: √3·230 V·23 A ≈ 9.16 kW; a 2 kW element on two lines counts as √3·2 kW, 0.73 kW more.
    expect(fusePlanLimitKw(it25, [])).toBeCloseTo(9.163, 3);
    expect(fusePlanLimitKw(it25, [2, 0.6])).toBeCloseTo(9.163 - (Math.sqrt(3) - 1) * 2.6, 3);
    // TN: 3·230 V·24 A = 16.56 kW; a 3 kW element on one line counts as 9 kW, 6 kW more.
    expect(fusePlanLimitKw({ supply: 'TN', phases: 3, mainFuseA: 25, marginA: 1 }, [3])).toBeCloseTo(10.56, 6);
    // A 1-phase supply: the heaters' current is their power over U, nothing more.
    expect(fusePlanLimitKw({ supply: 'TN', phases: 1, mainFuseA: 32, marginA: 1 }, [3])).toBeCloseTo(7.13, 6);
  });
});
