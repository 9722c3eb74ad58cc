/**
 * undici's `request` for one-off calls that come with a URL (the CLI, the sandbox's webhook
 * deliveries, the price fetch): http(s) only, on a shared Agent unless the caller brings its own
 * dispatcher (the Spark clients bring their pool, see connection.ts).
 */
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';

export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: Dispatcher.HttpMethod;
  dispatcher?: Dispatcher;
};

/** GET unless `method` says otherwise; any other scheme than http(s) is refused before a socket is opened. */
export function request(url: string, options: RequestOptions = {}): Promise<Dispatcher.ResponseData> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.reject(new TypeError(`unsupported URL scheme: ${target.protocol}`));
  const { dispatcher = defaultAgent(), method = 'GET', ...rest } = options;
  return undiciRequest(target, { ...rest, method, dispatcher });
}

let shared: Dispatcher | undefined;
function defaultAgent(): Dispatcher {
  shared ??= new Agent();
  return shared;
}
