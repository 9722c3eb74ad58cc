/**
 * Store size and write benchmark: simulates 400 days of hourly metering for 3 subjects (one
 * transaction per hour with the meter checkpoints, as the metering job does), a daily event with
 * its report going through the outbox, a plan per hour, and a daily prune with a one-year
 * retention. Prints figures (nothing is asserted) and ends with one JSON line.
 *
 *   npx tsx scripts/bench-store.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ManualClock } from '../src/clock.js';
import { openStore, type HourlyEnergyInput } from '../src/store/index.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const T0 = Date.UTC(2025, 0, 1);
const SUBJECTS = ['5f0c2a9e-0d4b-4c55-9a59-7d1e2b3c4d01', '5f0c2a9e-0d4b-4c55-9a59-7d1e2b3c4d02', 'location:loc-home-01'];
const RETENTION = { hourlyDays: 365, eventsDays: 90, plansDays: 7 };

/** Bytes this process wrote through write(2) and to the block layer, from /proc/self/io. */
function io(): { wchar: number; writeBytes: number } {
  try {
    const text = readFileSync('/proc/self/io', 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return { wchar: field('wchar'), writeBytes: field('write_bytes') };
  } catch {
    return { wchar: 0, writeBytes: 0 };
  }
}

/** A plan of 96 quarter-hour slots with a short reason each, about the size the planner emits. */
function planJson(h: number): unknown {
  return {
    slots: Array.from({ length: 96 }, (_, i) => ({
      startMs: T0 + h * HOUR_MS + i * 900_000,
      tank: (i + h) % 5 === 0 ? 'heat' : 'block',
      chargerA: (i * 7 + h) % 16,
      why: 'cheapest hours before the floor is reached',
    })),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'wattshift-bench-store-'));
const path = join(dir, 'bench.db');
const clock = new ManualClock(T0);
const store = openStore({ path, clock });

const days = 400;
/** Steady-state writes are measured once retention deletes as much as is added. */
const steadyFromDay = 370;
const sizes: { day: number; dbBytes: number }[] = [];
const ioStart = io();
let ioSteadyStart = ioStart;
const started = process.hrtime.bigint();
const counters = new Map(SUBJECTS.map((s) => [s, 1000]));

for (let day = 0; day < days; day++) {
  if (day === steadyFromDay) ioSteadyStart = io();
  for (let h = 0; h < 24; h++) {
    const hourStartMs = T0 + (day * 24 + h) * HOUR_MS;
    clock.set(hourStartMs + HOUR_MS + 30_000);
    const rows: HourlyEnergyInput[] = SUBJECTS.map((subject, k) => ({
      subject,
      hourStartMs,
      kwh: Math.round((0.2 + ((day * 24 + h + k) % 11) * 0.37) * 1000) / 1000,
      quality: 'measured',
      samples: 60,
    }));
    store.transaction(
      () => {
        store.upsertHourly(rows);
        store.saveCheckpoints(
          rows.map((r) => {
            const valueKwh = (counters.get(r.subject) ?? 0) + r.kwh;
            counters.set(r.subject, valueKwh);
            return { deviceId: r.subject, valueKwh, atMs: clock.nowMs() };
          }),
        );
      },
      { durable: false },
    );
    // Re-planning every hour; half of the time the plan is unchanged (and not written again).
    store.savePlan({
      createdAtMs: clock.nowMs(),
      horizonStartMs: hourStartMs,
      horizonEndMs: hourStartMs + DAY_MS,
      json: planJson(h % 2 === 0 ? h : h - 1),
    });
  }
  // One price-curve event a day, reported the next day through the outbox.
  const nowMs = clock.nowMs();
  const eventId = `ev-${day}`;
  store.saveEvent({
    eventId,
    payloadType: 'PriceCurve',
    createdAtMs: nowMs,
    receivedAtMs: nowMs,
    startMs: nowMs,
    endMs: nowMs + DAY_MS,
    resourceIds: SUBJECTS.slice(0, 2),
    rawJson: JSON.stringify({ eventId, points: Array.from({ length: 24 }, (_, i) => ({ i, delta: -0.05 })) }),
  });
  if (day > 0) {
    const prev = `ev-${day - 1}`;
    const { report } = store.transaction(() => {
      const r = store.enqueueReport({
        idempotencyKey: `${prev}:usage`,
        eventId: prev,
        kind: 'usage',
        body: { eventId: prev, payloads: SUBJECTS.map((s) => ({ resourceId: s, points: Array.from({ length: 24 }, (_, i) => ({ i, kwh: 0.5 })) })) },
        nowMs,
      });
      store.markEvent(prev, 'reportQueued');
      return r;
    });
    store.markSending(report.id, nowMs);
    store.markAccepted(report.id, nowMs, `rep-${day}`);
  }
  store.prune(clock.nowMs(), RETENTION);
  if ((day + 1) % 30 === 0) sizes.push({ day: day + 1, dbBytes: store.diskUsage().dbBytes });
}
const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
const ioEnd = io();
const usage = store.diskUsage();
const hourlyRows = SUBJECTS.reduce((n, s) => n + store.readHourly(s, 0, Number.MAX_SAFE_INTEGER).length, 0);
store.close();

// Exact bytes used by the hourly table and its index (dbstat), after a clean close.
const raw = new Database(path, { readonly: true });
const tableBytes = (name: string): number => Number(raw.prepare('SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?').pluck().get(name));
const hourlyBytes = tableBytes('hourly_energy');
const hourlyIndexBytes = tableBytes('hourly_energy_hour'); // 0 unless an index is added again
const fileBytes = Number(raw.pragma('page_count', { simple: true })) * Number(raw.pragma('page_size', { simple: true }));
raw.close();
rmSync(dir, { recursive: true, force: true });

const year1 = sizes.find((s) => s.day === 360)?.dbBytes ?? 0;
const atEnd = sizes.at(-1)?.dbBytes ?? 0;
const wcharPerDay = (ioEnd.wchar - ioSteadyStart.wchar) / (days - steadyFromDay);
const writeBytesPerDay = (ioEnd.writeBytes - ioSteadyStart.writeBytes) / (days - steadyFromDay);

console.log(`simulated ${days} days (${SUBJECTS.length} subjects, retention ${RETENTION.hourlyDays} d) in ${elapsedMs.toFixed(0)} ms`);
console.log(`hourly rows kept: ${hourlyRows}; table ${hourlyBytes} B + index ${hourlyIndexBytes} B`);
console.log(
  `bytes per hourly row: ${((hourlyBytes + hourlyIndexBytes) / hourlyRows).toFixed(1)} (table only ${(hourlyBytes / hourlyRows).toFixed(1)})`,
);
console.log(
  `database: ${(year1 / 1e6).toFixed(2)} MB after 360 days, ${(atEnd / 1e6).toFixed(2)} MB after ${sizes.at(-1)?.day ?? 0} days (retention on), ${(fileBytes / 1e6).toFixed(2)} MB at close`,
);
console.log(
  `steady-state writes per simulated day: ${(wcharPerDay / 1e6).toFixed(2)} MB via write(2), ${(writeBytesPerDay / 1e6).toFixed(2)} MB to the block layer`,
);
console.log(`WAL at end: ${usage.walBytes} B; free pages: ${usage.freePages}`);
console.log(
  JSON.stringify({
    days,
    subjects: SUBJECTS.length,
    hourlyRows,
    bytesPerHourlyRow: Math.round(((hourlyBytes + hourlyIndexBytes) / hourlyRows) * 10) / 10,
    dbMbPerYear: Math.round((year1 / 1e6) * 100) / 100,
    dbMbAtEnd: Math.round((atEnd / 1e6) * 100) / 100,
    diskBytesPerDay: Math.round(wcharPerDay),
    blockBytesPerDay: Math.round(writeBytesPerDay),
    elapsedMs: Math.round(elapsedMs),
  }),
);
