/**
 * The connection pool of the Spark clients: one undici `Agent` (or `ProxyAgent` when the gateway
 * sits behind a proxy) with keep-alive, connect/headers/body timeouts and a response size limit.
 * The API client, the token source and the forecast client share one, so the daemon keeps one
 * pool and one HTTP parser instance.
 */
import { Agent, ProxyAgent, type Dispatcher } from 'undici';

/** Timeouts of one HTTP attempt in milliseconds. */
export interface HttpTimeoutsMs {
  /** From the call until the socket is connected (DNS, TCP and the TLS handshake). Default 10 s. */
  connect?: number;
  /** From the request sent until the response headers arrived. Default 30 s. */
  headers?: number;
  /** Longest silence between two body chunks. Default 30 s. */
  body?: number;
}

export interface SparkConnectionOptions {
  timeoutsMs?: HttpTimeoutsMs;
  /** A larger response body fails with API_BAD_RESPONSE. Default {@link defaultMaxResponseBytes}. */
  maxResponseBytes?: number;
  /** `http://host:port` of a forward proxy; requests go through it (CONNECT for https). */
  proxyUrl?: string;
}

export interface SparkConnection {
  readonly dispatcher: Dispatcher;
  readonly maxResponseBytes: number;
  /** Ends every pooled connection at once (requests under way fail). */
  close(): Promise<void>;
}

/** 2 MiB: about 100 times the largest real body (the hourly 7-day forecast advice, ~21 kB). */
export const defaultMaxResponseBytes = 2 * 1024 * 1024;
/** Idle pooled sockets close after this, before a typical 5 s server keep-alive timeout can race a reuse. */
const idleSocketMs = 4_000;
/** Sockets per origin: the daemon's few concurrent calls (poll, prices, reports) never need more. */
const socketsPerOrigin = 4;

export function createSparkConnection(options: SparkConnectionOptions = {}): SparkConnection {
  const t = { connect: 10_000, headers: 30_000, body: 30_000, ...options.timeoutsMs };
  const maxResponseBytes = options.maxResponseBytes ?? defaultMaxResponseBytes;
  const agentOptions = {
    connect: { timeout: t.connect },
    headersTimeout: t.headers,
    bodyTimeout: t.body,
    keepAliveTimeout: idleSocketMs,
    keepAliveMaxTimeout: idleSocketMs,
    maxResponseSize: maxResponseBytes,
    connections: socketsPerOrigin,
  };
  const dispatcher = options.proxyUrl ? new ProxyAgent({ ...agentOptions, uri: options.proxyUrl }) : new Agent(agentOptions);
  let closed: Promise<void> | undefined;
  return {
    dispatcher,
    maxResponseBytes,
    close() {
      closed ??= dispatcher.destroy().catch(() => undefined);
      return closed;
    },
  };
}
