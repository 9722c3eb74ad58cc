import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/** Keys whose values never reach a log line, wherever they appear in a logged object. */
const redactedKeys = [
  'secret', 'clientSecret', 'password', 'token', 'accessToken', 'access_token', 'authorization',
  'Authorization', 'webhookSecret', 'client_secret',
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
}

/** The root logger. Components take `logger.child({ component: 'x' })`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  // Every secret, however short: a short one is weak, not public.
  const secrets = (options.secrets ?? []).filter((s) => s.length > 0);
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false });
  const stream: DestinationStream =
    secrets.length === 0
      ? destination
      : { write: (line: string) => destination.write(maskSecrets(line, secrets)) };
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
