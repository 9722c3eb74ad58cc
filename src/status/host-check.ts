/**
 * DNS rebinding guard: a web page on an attacker's name that resolves to the gateway would
 * otherwise read `/api/view` with the browser's help. A browser always sends the name it looked
 * up as `Host`, so only IP literals, `localhost` and the configured names are answered.
 */
import { isIP } from 'node:net';

/** Whether a request's `Host` header names this server (port ignored). */
export function hostAllowed(hostHeader: string | undefined, allowedNames: readonly string[]): boolean {
  if (hostHeader === undefined) return true;
  const host = hostHeader.trim().toLowerCase();
  // An IPv6 literal is bracketed, and only a port may follow it.
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(host);
  if (host.startsWith('[') && !bracketed) return false;
  const name = bracketed ? bracketed[1]! : host.replace(/:\d+$/, '');
  if (name === '') return false;
  if (isIP(name) !== 0 || name === 'localhost') return true;
  return allowedNames.some((a) => a.toLowerCase() === name);
}
