import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openStore } from '../src/store/index.js';
import { hoursOf } from './fixtures/store/crash-shape.js';
import { tempDir } from './helpers/temp-dir.js';
import { fixture, spawnTs } from './fixtures/store/run-ts.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('wattshift-crash-');
});

/** A small seeded PRNG, so a failing run can be replayed from the seed in the message. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Round {
  committed: number[];
  accepted: number[];
  stderr: string;
}

/** Starts the writer, lets it run for `runMs` after it is ready, then SIGKILLs it. */
async function runAndKill(path: string, runMs: number): Promise<Round> {
  const child = spawnTs(fixture('crash-writer.ts'), [path]);
  let out = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit');
  const deadline = Date.now() + 20_000;
  while (!out.includes('ready') && child.exitCode === null && Date.now() < deadline) await sleep(5);
  if (!out.includes('ready')) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`writer did not start: ${stderr}`);
  }
  await sleep(runMs);
  child.kill('SIGKILL');
  const [code, signal] = (await exited) as [number | null, string | null];
  expect({ code, signal, stderr }).toEqual({ code: null, signal: 'SIGKILL', stderr: '' });
  const numbers = (prefix: string): number[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith(`${prefix} `))
      .map((l) => Number(l.slice(prefix.length + 1)));
  return { committed: numbers('committed'), accepted: numbers('accepted'), stderr };
}

/** Reopens the database and checks it is sound and every writer transaction is all or nothing. */
function verify(path: string, committed: ReadonlySet<number>, accepted: ReadonlySet<number>): number {
  let n: number;
  const store = openStore({ path });
  try {
    expect(store.integrityCheck()).toEqual({ ok: true, messages: ['ok'] });
    const last = store.getState('last', z.number().int()) ?? -1;
    n = last + 1;
    // Every transaction whose commit returned survived the kill.
    for (const i of committed) expect(i, 'a committed transaction was lost').toBeLessThan(n);

    const events = store.listEvents();
    expect(events.map((e) => e.eventId).sort()).toEqual(Array.from({ length: n }, (_, i) => `ev-${i}`).sort());
    const reports = store.listReports();
    // An event is done exactly when its report is accepted (the same transaction).
    const reportState = new Map(reports.map((r) => [r.eventId, r.state]));
    expect(events.filter((e) => e.state !== (reportState.get(e.eventId) === 'accepted' ? 'done' : 'reportQueued'))).toEqual([]);

    expect(reports.map((r) => r.idempotencyKey).sort()).toEqual(Array.from({ length: n }, (_, i) => `ev-${i}:usage`).sort());
    expect(reports.filter((r) => r.state === 'sending')).toEqual([]); // recovered at open
    const byKey = new Map(reports.map((r) => [r.idempotencyKey, r]));
    for (const j of accepted) {
      expect(byKey.get(`ev-${j}:usage`)).toMatchObject({ state: 'accepted', remoteId: `remote-${j}` });
    }

    expect(store.loadCheckpoints()).toEqual(n === 0 ? [] : [{ deviceId: 'm', valueKwh: last, atMs: last }]);
  } finally {
    store.close();
  }
  const raw = new Database(path, { readonly: true });
  try {
    let expected = 0;
    for (let i = 0; i < n; i++) expected += hoursOf(i).length;
    expect(raw.prepare('SELECT count(*) FROM hourly_energy').pluck().get()).toBe(expected);
    // each row carries the iteration that wrote it, and no row exists for an absent iteration
    expect(raw.prepare('SELECT count(*) FROM hourly_energy WHERE kwh <> (hour_start_ms / 3600000) / 1000').pluck().get()).toBe(0);
    const maxIteration = raw.prepare('SELECT max((hour_start_ms / 3600000) / 1000) FROM hourly_energy').pluck().get();
    expect(maxIteration ?? -1).toBe(n - 1);
  } finally {
    raw.close();
  }
  return n;
}

describe('store: crash safety', () => {
  it('stays consistent when the writer is SIGKILLed at random moments', async () => {
    const path = join(dir, 'crash.db');
    const seed = Date.now() % 1_000_000;
    const random = prng(seed);
    const committed = new Set<number>();
    const accepted = new Set<number>();
    let total = 0;
    for (let round = 0; round < 6; round++) {
      const result = await runAndKill(path, 20 + Math.floor(random() * 230));
      result.committed.forEach((i) => committed.add(i));
      result.accepted.forEach((i) => accepted.add(i));
      try {
        total = verify(path, committed, accepted);
      } catch (err) {
        throw new Error(`crash round ${round} (seed ${seed}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    }
    // the writer made progress, so the kills did land between and inside real transactions
    if (process.env.STORE_CRASH_DEBUG) process.stderr.write(`crash: ${total} iterations, ${committed.size} committed, ${accepted.size} accepted\n`);
    expect(total).toBeGreaterThanOrEqual(3);
    expect(committed.size).toBeGreaterThan(0);
  });
});
