/**
 * Sends raw bytes to an HTTP listener over a plain TCP socket (no HTTP client in between, so
 * malformed request lines and headers reach the server as written) and reads what comes back.
 */
import { connect, type Socket } from 'node:net';

export interface RawCase {
  /** What is sent, part by part. */
  parts: Buffer[];
  /** Real-time pause before each part after the first (same length as parts, first ignored). */
  pausesMs: number[];
  /** After the last part: close the socket, half-close it (FIN, then read), or just wait for the answer. */
  end: 'close' | 'half-close' | 'wait';
}

export interface RawOutcome {
  /** Status of the first response line, or null when none came. */
  status: number | null;
  /** All statuses seen (pipelined requests answer more than once). */
  statuses: number[];
  bytes: number;
  /** 'closed' by the server, 'reset', 'timeout' (still open when given up), or 'sent-and-closed' by us. */
  ending: 'closed' | 'reset' | 'timeout' | 'sent-and-closed' | 'refused';
}

export interface SendOptions {
  host?: string;
  port: number;
  /** Source address (any of 127.0.0.0/8 on Linux), so that tests can play several peers. */
  localAddress?: string;
  /** Give up waiting for the server after this long, ms (default 3000). */
  timeoutMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sends one case and resolves once the server closed, the socket failed, or the wait ran out. */
export function sendRaw(c: RawCase, options: SendOptions): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect({
      host: options.host ?? '127.0.0.1',
      port: options.port,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
    const received: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    let connected = false;
    const finish = (ending: RawOutcome['ending']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString('latin1');
      const statuses = [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
      resolve({ status: statuses[0] ?? null, statuses, bytes, ending });
    };
    const timer = setTimeout(() => finish('timeout'), options.timeoutMs ?? 3_000);
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Enough to read the status lines; the rest is counted, not kept.
      if (bytes < 65_536) received.push(chunk);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(connected ? 'reset' : err.code === 'ECONNREFUSED' ? 'refused' : 'reset'));
    socket.on('close', () => finish('closed'));
    socket.on('connect', () => {
      connected = true;
      void (async () => {
        for (let i = 0; i < c.parts.length; i++) {
          if (i > 0 && (c.pausesMs[i] ?? 0) > 0) await sleep(c.pausesMs[i]!);
          if (settled || !socket.writable) return;
          socket.write(c.parts[i]!);
        }
        if (c.end === 'close') {
          // Give the server a moment to answer what was complete, then go.
          await sleep(50);
          if (!settled) finish('sent-and-closed');
        } else if (c.end === 'half-close' && !settled) {
          socket.end();
        }
      })();
    });
  });
}

/** Runs `cases` through `send` with at most `concurrency` at once; outcomes in case order. */
export async function runBatch<C, R>(cases: readonly C[], concurrency: number, send: (c: C, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(cases.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const i = next++;
      out[i] = await send(cases[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, cases.length) }, worker));
  return out;
}

/**
 * `count` slow-body sockets spread over `addresses`: whole headers announcing a large body, then
 * one byte of it a second. Each is reopened 200 ms after it closes (the refused ones thus come
 * back over a thousand times a second), until stopped.
 */
export function slowBodies(options: { port: number; path: string; count: number; addresses: readonly string[] }): { open(): number; stop(): void } {
  const sockets = new Set<Socket>();
  let stopped = false;
  const open = (n: number): void => {
    if (stopped) return;
    const s = connect({ host: '127.0.0.1', port: options.port, localAddress: options.addresses[n % options.addresses.length]! });
    s.on('error', () => undefined);
    s.on('connect', () => s.write(`POST ${options.path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`));
    const drip = setInterval(() => s.writable && s.write(' '), 1000);
    sockets.add(s);
    s.on('close', () => {
      clearInterval(drip);
      sockets.delete(s);
      setTimeout(() => open(n), 200);
    });
  };
  for (let i = 0; i < options.count; i++) open(i);
  return {
    open: () => sockets.size,
    stop: () => {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}
