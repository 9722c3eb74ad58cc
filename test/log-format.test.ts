/** Logs for people: journald priorities from pino levels, a pretty format for the terminal. */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, journaldPrefix, readableMoments, stdoutIsJournal } from '../src/log.js';
import { start, tempConfig } from './fixtures/config/cli-helpers.js';
import { tempDir } from './helpers/temp-dir.js';

function capture(format: 'json' | 'journald', secrets: string[] = []): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const logger = createLogger({ level: 'trace', format, secrets, destination: { write: (l: string) => void lines.push(l) } });
  return { lines, logger };
}

describe('journald priorities', () => {
  it('prefixes each line with the syslog priority of its level, and still masks secrets', () => {
    const { lines, logger } = capture('journald', ['s3cr3t-value']);
    logger.fatal('f');
    logger.error('e');
    logger.warn('w with s3cr3t-value');
    logger.info('i');
    logger.debug('d');
    logger.trace('t');
    expect(lines.map((l) => l.slice(0, 3))).toEqual(['<2>', '<3>', '<4>', '<6>', '<7>', '<7>']);
    expect(JSON.parse(lines[2]!.slice(3))).toMatchObject({ level: 'warn', msg: 'w with [REDACTED]' });
  });

  it('plain JSON has no prefix', () => {
    const { lines, logger } = capture('json');
    logger.warn('w');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', msg: 'w' });
    expect(journaldPrefix('not json')).toBe('<6>');
  });

  it('recognises stdout on the journal by $JOURNAL_STREAM (device:inode), not by its mere presence', () => {
    const fd = openSync(join(tempDir('wattshift-journal-'), 'out'), 'w');
    try {
      const st = fstatSync(fd);
      expect(stdoutIsJournal({ JOURNAL_STREAM: `${st.dev}:${st.ino}` }, fd)).toBe(true);
      expect(stdoutIsJournal({ JOURNAL_STREAM: `${st.dev}:${st.ino + 1}` }, fd)).toBe(false);
      expect(stdoutIsJournal({}, fd)).toBe(false);
    } finally {
      closeSync(fd);
    }
  });
});

describe('pretty lines', () => {
  it('show moments as ISO times and leave durations and other numbers alone', () => {
    const line = JSON.stringify({
      level: 'info',
      time: '2026-11-28T08:00:00.000Z',
      atMs: Date.UTC(2026, 10, 28, 9),
      tookMs: 25,
      planStartMs: Date.UTC(2026, 10, 28, 8),
      kwh: 1772471100000,
      msg: 'plan updated',
    });
    expect(JSON.parse(readableMoments(line))).toEqual({
      level: 'info',
      time: '2026-11-28T08:00:00.000Z',
      atMs: '2026-11-28T09:00:00.000Z',
      tookMs: 25,
      planStartMs: '2026-11-28T08:00:00.000Z',
      kwh: 1772471100000,
      msg: 'plan updated',
    });
    expect(readableMoments('not json\n')).toBe('not json\n');
  });
});

describe('wattshift run --log-format', { timeout: 120_000 }, () => {
  it('pretty prints readable lines; an unknown format is a usage error', async () => {
    const { file } = tempConfig();
    const p = start(['run', '--config', file, '--log-format', 'pretty']);
    await p.waitFor('running');
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}\] INFO: running/m);
    expect(r.stdout).not.toContain('{"level"');
    const bad = await start(['run', '--config', file, '--log-format', 'loud']).done;
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--log-format must be one of json, pretty, journald');
  });
});
