import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { isWattshiftError, type WattshiftError } from '../src/errors.js';
import { latestSchemaVersion, openStore } from '../src/store/index.js';
import { migrations } from '../src/store/migrations.js';
import { eventInput, T0 } from './fixtures/store/helpers.js';
import { tempDir } from './helpers/temp-dir.js';
import { canUnshareMount, fixture, nodeTsArgs } from './fixtures/store/run-ts.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('wattshift-store-');
});

function openError(path: string): WattshiftError {
  try {
    openStore({ path }).close();
  } catch (err) {
    if (isWattshiftError(err)) return err;
    throw err;
  }
  throw new Error(`opening ${path} succeeded`);
}

const mode = (file: string): number => statSync(file).mode & 0o777;

describe('openStore: schema', () => {
  it('creates the schema on an empty file, with WAL and incremental auto-vacuum', () => {
    const path = join(dir, 'w.db');
    openStore({ path }).close();
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('auto_vacuum', { simple: true })).toBe(2);
      const tables = raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).toEqual(['events', 'hourly_cost', 'hourly_energy', 'kv_state', 'meter_checkpoints', 'plans', 'report_outbox']);
    } finally {
      raw.close();
    }
  });

  it('migrates a version 1 file to the hourly cost table, keeping its hours', () => {
    const path = join(dir, 'v1.db');
    const raw = new Database(path);
    raw.exec(migrations[0]!.sql);
    raw.pragma('user_version = 1');
    raw.prepare("INSERT INTO hourly_energy VALUES ('location', 3600000, 2.5, 'measured', 60, 1)").run();
    raw.close();
    const store = openStore({ path });
    try {
      expect(store.readHourly('location', 0, 7_200_000)).toMatchObject([{ kwh: 2.5 }]);
      const cost = {
        subject: 'location',
        hourStartMs: 3_600_000,
        kwh: 2.5,
        currency: 'NOK',
        spotPerKwh: 1,
        source: 'actual' as const,
        gridPeriod: 'day',
        energy: 2.5,
        gridFee: 1,
        tax: 0.25,
        subsidy: 0,
        vat: 0.94,
        delta: 0,
        total: 4.69,
        baselineKwh: null,
        baselineTotal: null,
      };
      store.upsertHourlyCost([cost]);
      expect(store.readHourlyCost('location', 0, 7_200_000)).toMatchObject([{ ...cost, capacityShare: 0 }]);
      // An hour's cost goes with its energy.
      store.prune(10 * 86_400_000, { hourlyDays: 1, eventsDays: 1, plansDays: 1 });
      expect(store.readHourlyCost('location', 0, 7_200_000)).toEqual([]);
    } finally {
      store.close();
    }
    const again = new Database(path, { readonly: true });
    expect(again.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
    again.close();
  });

  it('migrates a version 2 file: its priced hours keep their cost, with no baseline and no capacity share yet', () => {
    const path = join(dir, 'v2.db');
    const raw = new Database(path);
    raw.exec(migrations[0]!.sql);
    raw.exec(migrations[1]!.sql);
    raw.pragma('user_version = 2');
    raw.prepare("INSERT INTO hourly_energy VALUES ('location', 3600000, 2.5, 'measured', 60, 1)").run();
    raw.prepare("INSERT INTO hourly_cost VALUES ('location', 3600000, 2.5, 'NOK', 1, 'actual', 'day', 2.5, 1, 0.25, 0, 0.94, 0, 4.69, 5)").run();
    raw.close();
    const store = openStore({ path });
    try {
      expect(store.readHourlyCost('location', 0, 7_200_000)).toEqual([
        {
          subject: 'location',
          hourStartMs: 3_600_000,
          kwh: 2.5,
          currency: 'NOK',
          spotPerKwh: 1,
          source: 'actual',
          gridPeriod: 'day',
          energy: 2.5,
          gridFee: 1,
          tax: 0.25,
          subsidy: 0,
          vat: 0.94,
          delta: 0,
          total: 4.69,
          baselineKwh: null,
          baselineTotal: null,
          capacityShare: 0,
          pricedAtMs: 5,
        },
      ]);
      // The new columns take what a version-3 daemon writes; the share of an hour no longer a peak goes back to 0.
      store.upsertHourlyCost(
        [{ ...store.readHourlyCost('location', 0, 7_200_000)[0]!, baselineKwh: 4, baselineTotal: 7.5 }].map(
          ({ capacityShare: _, pricedAtMs: __, ...r }) => r,
        ),
      );
      store.setCapacityShares('location', 0, 7_200_000, [{ hourStartMs: 3_600_000, share: 120 }]);
      expect(store.readHourlyCost('location', 0, 7_200_000)[0]).toMatchObject({ baselineKwh: 4, baselineTotal: 7.5, capacityShare: 120 });
      store.setCapacityShares('location', 0, 7_200_000, []);
      expect(store.readHourlyCost('location', 0, 7_200_000)[0]!.capacityShare).toBe(0);
    } finally {
      store.close();
    }
    const again = new Database(path, { readonly: true });
    expect(again.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
    again.close();
  });

  it('migrates a version 3 file: a plan stored as JSON text reads back, and the same plan is not stored again', () => {
    const path = join(dir, 'v3.db');
    const raw = new Database(path);
    for (const m of migrations.slice(0, 3)) raw.exec(m.sql);
    raw.pragma('user_version = 3');
    raw.prepare('INSERT INTO plans VALUES (1, 5, 0, 3600000, ?)').run(JSON.stringify({ slots: [{ energyKwh: 1 }] }));
    raw.close();
    const store = openStore({ path });
    try {
      expect(store.latestPlan()).toEqual({ id: 1, createdAtMs: 5, horizonStartMs: 0, horizonEndMs: 3_600_000, json: { slots: [{ energyKwh: 1 }] } });
      expect(store.savePlan({ createdAtMs: 6, horizonStartMs: 0, horizonEndMs: 3_600_000, json: { slots: [{ energyKwh: 1 }] } })).toEqual({
        id: 1,
        stored: false,
      });
      expect(store.savePlan({ createdAtMs: 7, horizonStartMs: 0, horizonEndMs: 3_600_000, json: { slots: [{ energyKwh: 2 }] } })).toEqual({
        id: 2,
        stored: true,
      });
      expect(store.plansById([1, 2]).map((p) => p.json)).toEqual([{ slots: [{ energyKwh: 1 }] }, { slots: [{ energyKwh: 2 }] }]);
    } finally {
      store.close();
    }
  });

  it('keeps the data across close and reopen, without re-running migrations', () => {
    const path = join(dir, 'w.db');
    const a = openStore({ path });
    a.saveEvent(eventInput('e1'));
    a.setState('registration', { userId: 'u1' });
    a.close();
    const b = openStore({ path });
    expect(b.hasEvent('e1')).toBe(true);
    expect(b.saveEvent(eventInput('e1'))).toBe(false);
    b.close();
  });

  it('refuses a database written by a newer schema, naming both versions, and leaves it alone', () => {
    const path = join(dir, 'w.db');
    openStore({ path }).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${latestSchemaVersion + 1}`);
    raw.pragma('journal_mode = DELETE');
    raw.close();
    const before = readFileSync(path);
    const err = openError(path);
    expect(err.code).toBe('STORE_SCHEMA_NEWER');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(path);
    expect(err.message).toContain(`version ${latestSchemaVersion + 1}`);
    expect(err.message).toMatch(/newer wattshift/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('works in memory for unit tests', () => {
    const store = openStore({ path: ':memory:' });
    expect(store.saveEvent(eventInput('e1'))).toBe(true);
    expect(store.hasEvent('e1')).toBe(true);
    store.close();
  });
});

describe('openStore: bad locations', () => {
  it('fails with STORE_OPEN_FAILED naming the path when the directory is missing', () => {
    const path = join(dir, 'no-such-dir', 'w.db');
    const err = openError(path);
    expect(err.code).toBe('STORE_OPEN_FAILED');
    expect(err.message).toContain(path);
    expect(err.message).toMatch(/does not exist/);
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });

  it('fails with STORE_OPEN_FAILED when a path component is a file', () => {
    writeFileSync(join(dir, 'plain-file'), 'x');
    const path = join(dir, 'plain-file', 'w.db');
    const err = openError(path);
    expect(err.code).toBe('STORE_OPEN_FAILED');
    expect(err.message).toContain(path);
  });

  it('fails with STORE_OPEN_FAILED on a file that is not a database', () => {
    const path = join(dir, 'w.db');
    writeFileSync(path, 'this is not an SQLite file, just some text that is long enough '.repeat(20));
    const err = openError(path);
    expect(err.code).toBe('STORE_OPEN_FAILED');
    expect(err.message).toContain(path);
  });

  // Tests run as root here, where a chmod 0500 directory stays writable. Two substitutes:
  // sysfs, where even root cannot create files, and a real read-only bind mount made in an
  // unprivileged user+mount namespace (`unshare -rm`), where writes fail with EROFS.
  it.skipIf(!existsSync('/sys/kernel'))('fails with STORE_OPEN_FAILED in a directory where files cannot be created', () => {
    const err = openError('/sys/wattshift-test.db');
    expect(err.code).toBe('STORE_OPEN_FAILED');
    expect(err.message).toContain('/sys/wattshift-test.db');
  });

  it.skipIf(process.getuid?.() === 0)('fails with STORE_OPEN_FAILED in a chmod 0500 directory (non-root)', () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o500);
    try {
      const err = openError(join(ro, 'w.db'));
      expect(err.code).toBe('STORE_OPEN_FAILED');
      expect(err.message).toMatch(/not writable/);
    } finally {
      chmodSync(ro, 0o700);
    }
  });

  it.skipIf(!canUnshareMount())('fails with STORE_OPEN_FAILED on a read-only mount, new or existing database', () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    openStore({ path: join(ro, 'existing.db') }).close();
    const probe = (path: string): { ok: boolean; code?: string; message?: string } => {
      const node = nodeTsArgs(fixture('open-probe.ts'), [path, 'write'])
        .map((a) => `'${a}'`)
        .join(' ');
      const script = `mount --bind '${ro}' '${ro}' && mount -o remount,bind,ro '${ro}' && exec ${node}`;
      const r = spawnSync('unshare', ['-rm', 'sh', '-c', script], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '') as { ok: boolean; code?: string; message?: string };
    };
    const fresh = probe(join(ro, 'new.db'));
    expect(fresh).toMatchObject({ ok: false, code: 'STORE_OPEN_FAILED' });
    expect(fresh.message).toContain(join(ro, 'new.db'));
    const existing = probe(join(ro, 'existing.db'));
    expect(existing).toMatchObject({ ok: false, code: 'STORE_OPEN_FAILED' });
    expect(existing.message).toContain(join(ro, 'existing.db'));
  });
});

describe('openStore: file modes', () => {
  it('creates the database, -wal and -shm files with mode 0600', () => {
    const path = join(dir, 'w.db');
    const old = process.umask(0o022);
    try {
      const store = openStore({ path });
      store.saveEvent(eventInput('e1'));
      for (const f of [path, `${path}-wal`, `${path}-shm`]) expect([f, mode(f).toString(8)]).toEqual([f, '600']);
      store.close();
    } finally {
      process.umask(old);
    }
  });

  it('tightens an existing world-readable database to 0600', () => {
    const path = join(dir, 'w.db');
    openStore({ path }).close();
    chmodSync(path, 0o644);
    const store = openStore({ path });
    expect(mode(path)).toBe(0o600);
    store.setState('k', 1);
    expect(mode(`${path}-wal`)).toBe(0o600);
    store.close();
  });
});

describe('openStore: interrupted sends', () => {
  it('puts reports left in sending back to pending at open, and says which', () => {
    const path = join(dir, 'w.db');
    const a = openStore({ path });
    a.saveEvent(eventInput('e1'));
    const { report } = a.enqueueReport({ idempotencyKey: 'e1:usage', eventId: 'e1', kind: 'usage', body: {}, nowMs: T0 });
    a.markSending(report.id, T0 + 1);
    a.close(); // as if the process died before the API answered
    const b = openStore({ path, clock: { nowMs: () => T0 + 99, sleep: () => Promise.resolve() } });
    expect(b.interruptedAtOpen.map((r) => r.idempotencyKey)).toEqual(['e1:usage']);
    const after = b.getReport(report.id);
    expect(after).toMatchObject({ state: 'pending', attempts: 1, nextAttemptMs: T0 + 99 });
    expect(b.dueReports(T0 + 99).map((r) => r.id)).toEqual([report.id]);
    expect(b.recoverInterrupted()).toEqual([]);
    b.close();
  });
});

describe('openStore: read-only', () => {
  it('reads beside a running writer without touching its in-flight reports, and refuses writes', () => {
    const path = join(dir, 'w.db');
    const writer = openStore({ path });
    try {
      writer.saveEvent(eventInput('e1'));
      const { report } = writer.enqueueReport({ idempotencyKey: 'k', eventId: 'e1', kind: 'usage', body: {}, nowMs: T0 });
      writer.markSending(report.id, T0);
      const reader = openStore({ path, readOnly: true });
      try {
        expect(reader.interruptedAtOpen).toEqual([]);
        expect(reader.outboxSummary()).toMatchObject({ pending: 0, sending: 1 });
        expect(reader.getEvent('e1')?.eventId).toBe('e1');
        let err: unknown;
        try {
          reader.setState('x', 1);
        } catch (e) {
          err = e;
        }
        expect(isWattshiftError(err, 'STORE_FAILED')).toBe(true);
        expect((err as WattshiftError).details).toMatchObject({ sqliteCode: 'SQLITE_READONLY' });
      } finally {
        reader.close();
      }
      // the writer can still finish its send
      expect(writer.markAccepted(report.id, T0 + 1).state).toBe('accepted');
    } finally {
      writer.close();
    }
  });

  it('fails with STORE_OPEN_FAILED when the file is missing or not migrated', () => {
    const missing = join(dir, 'missing.db');
    expect(() => openStore({ path: missing, readOnly: true })).toThrow(/missing\.db: the file does not exist/);
    expect(existsSync(missing)).toBe(false);
    const empty = join(dir, 'empty.db');
    new Database(empty).close();
    let err: unknown;
    try {
      openStore({ path: empty, readOnly: true });
    } catch (e) {
      err = e;
    }
    expect(isWattshiftError(err, 'STORE_OPEN_FAILED')).toBe(true);
    expect((err as Error).message).toMatch(/start the daemon once/);
  });
});
