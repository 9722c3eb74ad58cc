/** Exit codes of the process; systemd's `RestartPreventExitStatus=78` relies on them. */
import { WattshiftError } from '../errors.js';

export const exitCodes = {
  ok: 0,
  failure: 1,
  usage: 2,
  /** EX_CONFIG: invalid config or rejected credentials; restarting would not help. */
  config: 78,
} as const;

/**
 * Codes that only an edit of the config (or its files) can fix: restarting would not help. Broker
 * TLS and authentication failures are left out: at boot a Pi without a clock, or a broker still
 * loading its users, fails them for a while.
 */
const configFaults = new Set(['AUTH_REJECTED', 'DEVICE_PROFILE_INVALID']);

/** 78 for config problems, rejected credentials and invalid device profiles, 1 for everything else. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof WattshiftError && (err.code.startsWith('CONFIG_') || configFaults.has(err.code))) return exitCodes.config;
  return exitCodes.failure;
}

/** 128 + signal number, the shell convention for "killed by a signal". */
export function signalExitCode(signal: 'SIGINT' | 'SIGTERM'): number {
  return signal === 'SIGINT' ? 130 : 143;
}
