/** Exit codes of the process; systemd's `RestartPreventExitStatus=78` relies on them. */
import { WattshiftError } from '../errors.js';

export const exitCodes = {
  ok: 0,
  failure: 1,
  usage: 2,
  /** EX_CONFIG: invalid config or rejected credentials; restarting would not help. */
  config: 78,
} as const;

/** 78 for config problems and rejected credentials, 1 for everything else. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof WattshiftError && (err.code.startsWith('CONFIG_') || err.code === 'AUTH_REJECTED')) return exitCodes.config;
  return exitCodes.failure;
}

/** 128 + signal number, the shell convention for "killed by a signal". */
export function signalExitCode(signal: 'SIGINT' | 'SIGTERM'): number {
  return signal === 'SIGINT' ? 130 : 143;
}
