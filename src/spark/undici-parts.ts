/**
 * The parts of undici wattshift uses, loaded one by one. undici's index loads all of undici
 * (fetch, WebSocket, EventSource, caches, mocks): about 5 MiB more RSS for code the daemon never
 * runs (measured with scripts/bench-stack-rss.mjs). undici 7 has no exports map, so these paths
 * are reachable; package.json pins the version, and `test/spark-connection.test.ts` fails if
 * another one moves them.
 */
import type { Dispatcher } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import DispatcherClass from 'undici/lib/dispatcher/dispatcher.js';
import ProxyAgentClass from 'undici/lib/dispatcher/proxy-agent.js';
import apiConnect from 'undici/lib/api/api-connect.js';
import apiRequest from 'undici/lib/api/api-request.js';
import retry from 'undici/lib/interceptor/retry.js';

// ProxyAgent opens its tunnel with `dispatcher.connect()`, which undici's index adds to every dispatcher.
DispatcherClass.prototype.connect ??= apiConnect;

export const Agent = AgentClass;
export const ProxyAgent = ProxyAgentClass;
export const retryInterceptor = retry;

/** undici's `request` on `dispatcher` (a fresh shared Agent when absent): URL plus options. */
export function request(url: string, options: Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & { method?: Dispatcher.HttpMethod; dispatcher?: Dispatcher } = {}): Promise<Dispatcher.ResponseData> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.reject(new TypeError(`unsupported URL scheme: ${target.protocol}`));
  const { dispatcher = defaultAgent(), method = 'GET', ...rest } = options;
  return apiRequest.call(dispatcher, { ...rest, method, origin: target.origin, path: `${target.pathname}${target.search}` });
}

let shared: Dispatcher | undefined;
/** For the CLI's and the sandbox's occasional requests (the Spark clients bring their own pool). */
function defaultAgent(): Dispatcher {
  shared ??= new Agent();
  return shared;
}
