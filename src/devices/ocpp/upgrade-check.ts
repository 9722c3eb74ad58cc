/**
 * The first look at a WebSocket upgrade on the OCPP port, before ocpp-rpc or ws see it: anyone on
 * the network can send one, and ocpp-rpc decodes the path outside its own error handling (a bad
 * percent-escape would throw out of the `upgrade` event). Only a request a charge point could send
 * passes (RFC 6455 §4.1 and OCPP-J 1.6 §3: `GET /<path>/<chargePointId>` in origin form, the
 * WebSocket headers, subprotocol `ocpp1.6`); anything else is answered 4xx and the socket closed.
 */
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { z } from 'zod';

/** The subprotocol of OCPP 1.6J (OCPP-J 1.6 §3.1.2). */
export const ocppSubprotocol = 'ocpp1.6';

/** Longer targets are no charge point's: the identity is at most 48 characters (config). */
const maxTargetLength = 512;

/** An HTTP token (RFC 9110 §5.6.2), the grammar of one subprotocol name. */
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Subprotocols as ws and ocpp-rpc read them: tokens separated by commas, none twice. */
function subprotocols(header: string): string[] | undefined {
  const names = header.split(',').map((s) => s.replace(/^[ \t]+|[ \t]+$/g, ''));
  if (!names.every((n) => token.test(n)) || new Set(names).size !== names.length) return undefined;
  return names;
}

const upgradeHeaders = z.looseObject({
  upgrade: z.string().regex(/^websocket$/i),
  // A base64 16-byte nonce (RFC 6455 §4.1 item 7).
  'sec-websocket-key': z.string().regex(/^[+/0-9A-Za-z]{22}==$/),
  'sec-websocket-version': z.literal('13'),
  'sec-websocket-protocol': z
    .string()
    .max(256)
    .transform((h, ctx) => {
      const names = subprotocols(h);
      if (!names?.includes(ocppSubprotocol)) ctx.addIssue({ code: 'custom', message: `no ${ocppSubprotocol} among the subprotocols` });
      return names ?? [];
    }),
});

export type UpgradeVerdict = { ok: true; identity: string } | { ok: false; status: 400 | 404 | 405; why: string };

/**
 * Whether an upgrade request may go on to ocpp-rpc. The identity is read as ocpp-rpc reads it
 * (the last segment of the WHATWG-parsed path, percent-decoded), so a request that passes here
 * cannot throw there.
 */
export function checkUpgrade(method: string | undefined, target: string | undefined, headers: IncomingHttpHeaders): UpgradeVerdict {
  if (method !== 'GET') return { ok: false, status: 405, why: 'not a GET' };
  if (!target || !target.startsWith('/') || target.length > maxTargetLength) {
    return { ok: false, status: 400, why: 'the target is not a path (origin form) of at most 512 characters' };
  }
  const parsedHeaders = upgradeHeaders.safeParse(headers);
  if (!parsedHeaders.success) {
    const field = parsedHeaders.error.issues[0]?.path.join('.') ?? '';
    return { ok: false, status: 400, why: `bad or missing ${field} header` };
  }
  let identity: string;
  try {
    identity = decodeURIComponent(new URL(`http://localhost${target}`).pathname.split('/').pop() ?? '');
  } catch {
    return { ok: false, status: 400, why: 'malformed percent-escape in the path' };
  }
  if (identity === '') return { ok: false, status: 404, why: 'no charge point id in the path' };
  return { ok: true, identity };
}

/** Answers a refused upgrade with `status` and no body, then closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number): void {
  // A peer that resets meanwhile only ends its own socket.
  socket.on('error', () => socket.destroy());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
}
