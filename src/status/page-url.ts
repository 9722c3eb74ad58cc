/** Where people reach the status page, for Home Assistant's device links and the server's host check. */
import type { Config } from '../config/schema.js';

const notReachableFromOutside = new Set(['127.0.0.1', '::1', 'localhost', '0.0.0.0', '::']);

/**
 * `http.pageUrl`, else `http://<host>:<port>/` when the server listens on one address other than
 * loopback; undefined when the page is off or no outside address is known (a wildcard listen
 * address says nothing about the name others use).
 */
export function statusPageUrl(http: Config['http']): string | undefined {
  if (!http.enabled) return undefined;
  if (http.pageUrl !== undefined) return http.pageUrl;
  if (notReachableFromOutside.has(http.host)) return undefined;
  return `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}/`;
}

/** `http.allowedHosts` plus the host name of `http.pageUrl` (a link that answered 421 would be no link). */
export function allowedPageHosts(http: Config['http']): string[] {
  const names = [...http.allowedHosts];
  if (http.pageUrl !== undefined) {
    const name = new URL(http.pageUrl).hostname;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}
