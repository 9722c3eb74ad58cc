import { fstatSync } from 'node:fs';
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/** Keys whose values never reach a log line, wherever they appear in a logged object. */
const redactedKeys = [
  'secret',
  'clientSecret',
  'password',
  'token',
  'accessToken',
  'access_token',
  'authorization',
  'Authorization',
  'webhookSecret',
  'client_secret',
];

function redactPaths(): string[] {
  return redactedKeys.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`]);
}

export interface LoggerOptions {
  level?: string;
  /** Where lines go; stdout (for journald) by default. */
  destination?: DestinationStream;
  /**
   * Literal secret values (from the loaded config) that must never appear in output, even inside
   * a message string. They are masked as `[REDACTED]`.
   */
  secrets?: readonly string[];
  /**
   * `json` (default): one JSON object a line. `journald`: the same, each line prefixed with the
   * syslog priority (`<3>` error ... `<7>` debug) that journald reads, so `journalctl -p warning`
   * filters. `pretty` is for a terminal: see {@link prettyDestination}.
   */
  format?: 'json' | 'journald';
}

export const logFormats = ['json', 'pretty', 'journald'] as const;
export type LogFormat = (typeof logFormats)[number];

/** Syslog priorities (sd-daemon(3)) of pino's levels. */
const priorities: Record<string, number> = { fatal: 2, error: 3, warn: 4, info: 6, debug: 7, trace: 7 };

/** `<N>` before a JSON log line, from its `"level"` (the first key of every line). */
export function journaldPrefix(line: string): string {
  const level = /^\{"level":"([a-z]+)"/.exec(line)?.[1];
  return `<${(level && priorities[level]) ?? 6}>`;
}

/**
 * Whether stdout is connected to journald: systemd sets `$JOURNAL_STREAM` to the device and
 * inode of that stream (systemd.exec(5)); a redirected stdout no longer matches it.
 */
export function stdoutIsJournal(env: NodeJS.ProcessEnv, fd = 1): boolean {
  const expected = env.JOURNAL_STREAM;
  if (!expected) return false;
  try {
    const st = fstatSync(fd);
    return `${st.dev}:${st.ino}` === expected;
  } catch {
    return false;
  }
}

/** Epoch milliseconds between 2001 and 2286: what a `…Ms` field holds when it is a moment, not a duration. */
const isMoment = (key: string, value: unknown): value is number => key.endsWith('Ms') && typeof value === 'number' && value >= 1e12 && value < 1e13;

/** A JSON log line with every moment (`atMs`, `planStartMs`, …) as an ISO 8601 time, for people. */
export function readableMoments(line: string): string {
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof fields !== 'object' || fields === null) return line;
  let changed = false;
  for (const [key, value] of Object.entries(fields)) {
    if (isMoment(key, value)) {
      fields[key] = new Date(value).toISOString();
      changed = true;
    }
  }
  return changed ? `${JSON.stringify(fields)}\n` : line;
}

/**
 * A destination that prints lines for people through pino-pretty: colours, the host's local time
 * with its UTC offset, and moments as ISO times instead of epoch milliseconds.
 */
export async function prettyDestination(): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  const out = pretty({ colorize: process.stdout.isTTY === true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss o', ignore: 'pid,hostname', sync: true });
  return { write: (line: string) => out.write(readableMoments(line)) };
}

/** The root logger. Components take `logger.child({ component: 'x' })`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  // Every secret, however short: a short one is weak, not public.
  const secrets = (options.secrets ?? []).filter((s) => s.length > 0);
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false });
  const journald = options.format === 'journald';
  const stream: DestinationStream =
    secrets.length === 0 && !journald
      ? destination
      : {
          write: (line: string) => {
            const masked = secrets.length === 0 ? line : maskSecrets(line, secrets);
            destination.write(journald ? journaldPrefix(masked) + masked : masked);
          },
        };
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: redactPaths(), censor: '[REDACTED]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
}

function maskSecrets(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const s of secrets) {
    if (out.includes(s)) out = out.split(s).join('[REDACTED]');
    const escaped = JSON.stringify(s).slice(1, -1);
    if (escaped !== s && out.includes(escaped)) out = out.split(escaped).join('[REDACTED]');
  }
  return out;
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
