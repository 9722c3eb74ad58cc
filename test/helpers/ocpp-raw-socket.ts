/**
 * A charge point's connection at the byte level, for hostile tests of the OCPP listener: any HTTP
 * upgrade request as written, and once upgraded, any WebSocket frame (RFC 6455 §5.2), fragmented,
 * oversized or broken, which a WebSocket library would refuse to send.
 */
import { connect, type Socket } from 'node:net';

/** The answer to a raw request: the status of its first response line (0: closed without one). */
export interface RawAnswer {
  status: number;
  head: string;
}

const headEnd = '\r\n\r\n';

/** Sends `request` as written on a new connection and reads the response head (closing it then). */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    const done = (): void => {
      clearTimeout(timer);
      s.destroy();
      const head = got.split(headEnd)[0] ?? '';
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head });
    };
    const timer = setTimeout(done, timeoutMs);
    s.on('error', () => undefined);
    s.on('connect', () => s.write(request));
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes(headEnd)) done();
    });
    s.on('close', done);
  });
}

/** A genuine upgrade request for `identity` (with basic auth when `password` is given). */
export function upgradeRequest(identity: string, password?: string, path = '/ocpp'): string {
  const auth = password === undefined ? '' : `Authorization: Basic ${Buffer.from(`${identity}:${password}`).toString('base64')}\r\n`;
  return (
    `GET ${path}/${encodeURIComponent(identity)} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ocpp1.6\r\n${auth}\r\n`
  );
}

export const opcode = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/**
 * One client frame: masked (as a client's must be, §5.3) unless `masked` is false. `claimLength`
 * writes another payload length into the header than the payload has (a frame announced, not sent).
 */
export function frame(op: number, payload: Buffer | string, o: { fin?: boolean; masked?: boolean; claimLength?: number } = {}): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const len = o.claimLength ?? body.length;
  const masked = o.masked ?? true;
  const lenBytes = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const head = Buffer.alloc(2 + lenBytes + (masked ? 4 : 0));
  head[0] = ((o.fin ?? true) ? 0x80 : 0) | (op & 0x0f);
  head[1] = (masked ? 0x80 : 0) | (lenBytes === 0 ? len : lenBytes === 2 ? 126 : 127);
  if (lenBytes === 2) head.writeUInt16BE(len, 2);
  if (lenBytes === 8) head.writeBigUInt64BE(BigInt(len), 2);
  const key = [0x37, 0xfa, 0x21, 0x3d];
  if (masked) head.set(key, 2 + lenBytes);
  const out = Buffer.from(body);
  if (masked) for (let i = 0; i < out.length; i++) out[i]! ^= key[i % 4]!;
  return Buffer.concat([head, out]);
}

export interface RawOcppSocket {
  /** Writes bytes as they are. */
  write(bytes: Buffer): void;
  /** Sends one whole text message in one frame. */
  sendText(text: string): void;
  /** The next text message from the central system that `match` accepts (others are skipped), or undefined after `timeoutMs`. */
  next(match: (text: string) => boolean, timeoutMs?: number): Promise<string | undefined>;
  /** The close code the central system sent (1006 if the connection ended without one). */
  readonly closed: Promise<number>;
  readonly isOpen: boolean;
  close(): void;
}

/** Upgrades a connection as `identity` and reads the central system's frames; rejects unless it answers 101. */
export function openRawOcpp(port: number, identity: string, password: string): Promise<RawOcppSocket> {
  return new Promise((resolve, reject) => {
    const s: Socket = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let upgraded = false;
    let open = true;
    const texts: string[] = [];
    const waiters = new Set<() => void>();
    let fragments: Buffer[] = [];
    let closeCode = 1006;
    let markClosed: (code: number) => void = () => undefined;
    const closed = new Promise<number>((r) => (markClosed = r));
    const wake = (): void => {
      for (const w of [...waiters]) w();
    };
    const readFrames = (): void => {
      for (;;) {
        if (buf.length < 2) return;
        const b1 = buf[1]! & 0x7f;
        const lenBytes = b1 === 126 ? 2 : b1 === 127 ? 8 : 0;
        if (buf.length < 2 + lenBytes) return;
        const len = lenBytes === 0 ? b1 : lenBytes === 2 ? buf.readUInt16BE(2) : Number(buf.readBigUInt64BE(2));
        if (buf.length < 2 + lenBytes + len) return;
        const fin = (buf[0]! & 0x80) !== 0;
        const op = buf[0]! & 0x0f;
        const payload = buf.subarray(2 + lenBytes, 2 + lenBytes + len);
        buf = buf.subarray(2 + lenBytes + len);
        if (op === opcode.close) closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        else if (op === opcode.ping) s.write(frame(opcode.pong, Buffer.from(payload)));
        else if (op === opcode.text || op === opcode.continuation) {
          fragments.push(Buffer.from(payload));
          if (fin) {
            texts.push(Buffer.concat(fragments).toString('utf8'));
            fragments = [];
            wake();
          }
        }
      }
    };
    s.on('error', () => undefined);
    s.on('connect', () => s.write(upgradeRequest(identity, password)));
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const end = buf.indexOf(headEnd);
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + headEnd.length);
        if (!head.startsWith('HTTP/1.1 101')) {
          s.destroy();
          return reject(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
        }
        upgraded = true;
        resolve(raw);
      }
      readFrames();
    });
    s.on('close', () => {
      open = false;
      markClosed(closeCode);
      wake();
      if (!upgraded) reject(new Error('closed before the upgrade'));
    });
    const raw: RawOcppSocket = {
      write: (bytes) => void (open && s.write(bytes)),
      sendText: (text) => raw.write(frame(opcode.text, text)),
      next(match, timeoutMs = 5000) {
        return new Promise((res) => {
          const look = (): void => {
            const i = texts.findIndex(match);
            if (i >= 0) {
              finish();
              res(texts.splice(i, 1)[0]);
            } else if (!open) {
              finish();
              res(undefined);
            }
          };
          const timer = setTimeout(() => {
            finish();
            res(undefined);
          }, timeoutMs);
          const finish = (): void => {
            clearTimeout(timer);
            waiters.delete(look);
          };
          waiters.add(look);
          look();
        });
      },
      closed,
      get isOpen() {
        return open;
      },
      close: () => s.destroy(),
    };
  });
}
