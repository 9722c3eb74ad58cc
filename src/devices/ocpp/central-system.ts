/**
 * wattshift as a local OCPP 1.6J central system: charge points connect to
 * `ws://<host>:<port>/<path>/<chargePointId>` (or `wss://` with a certificate: Security Profile 2)
 * with HTTP basic auth, user = charge point id, password per charge point (Security Profile 1 of
 * the OCPP 1.6 Security Whitepaper). The RPC framing (message ids, CALL/CALLRESULT/CALLERROR,
 * validation against the 1.6 JSON schemas, CALLERROR for malformed frames) is ocpp-rpc's.
 *
 * What it answers (OCPP 1.6 edition 2): BootNotification (§4.2, Accepted with the configured
 * heartbeat interval), Heartbeat (§4.6), StatusNotification (§4.9), MeterValues (§4.7),
 * Start/StopTransaction (§4.8, §4.10; every idTag is accepted: this is the home's own central
 * system), Authorize (§4.1). On every connection it sets HeartbeatInterval,
 * MeterValueSampleInterval and MeterValuesSampledData (§5.3, §9.1) and asks for the connectors'
 * status and meter values (TriggerMessage, §5.17), so that after its own restart it learns the
 * state and the energy register again.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { RPCServer, createRPCError } from 'ocpp-rpc';
import { WattshiftError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { rateLimitedWarn } from '../../log-limit.js';
import type { Clock } from '../../ports.js';
import { ChargePointLink, type OcppClient } from './link.js';
import { checkUpgrade, ocppSubprotocol, refuseUpgrade } from './upgrade-check.js';
import {
  authorizeSchema,
  meterValuesSchema,
  readMeterValues,
  startTransactionSchema,
  statusNotificationSchema,
  stopTransactionSchema,
} from './messages.js';

export interface CentralSystemOptions {
  host: string;
  port: number;
  heartbeatIntervalS: number;
  meterValueSampleIntervalS: number;
  /** The charge points allowed to connect, each with its basic-auth password. */
  chargePoints: readonly { id: string; password: string }[];
  /** PEM certificate and key: serve wss:// (Security Profile 2). */
  tls?: { cert: string; key: string };
  /** How long a request to a charge point may take, ms of clock time. */
  requestTimeoutMs?: number;
  clock: Clock;
  logger: Logger;
}

export interface CentralSystem {
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  /** The link to a configured charge point (whether or not it is connected). */
  link(id: string): ChargePointLink;
  close(): Promise<void>;
}

const digest = (s: string | Buffer): Buffer => createHash('sha256').update(s).digest();

/**
 * The largest WebSocket message a charge point may send, bytes; a larger one closes its connection
 * (1009) before it is read. OCPP 1.6J sets no limit; the largest messages a charge point sends a
 * central system are a GetConfiguration answer (a key of at most 50 characters and a value of at
 * most 500 per configuration key, GetConfiguration.conf: some 115 KB for 200 keys, each at its longest) and
 * MeterValues or StopTransaction with many sampled values (a few hundred bytes each). 256 KiB keeps
 * room above those; ws's own default (100 MiB) lets one frame run the gateway out of memory.
 */
export const maxFrameBytes = 256 * 1024;

/** Connection errors that are the peer's doing (a reset, a cut cable): no warning of their own. */
const peerGone = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

export function createCentralSystem(options: CentralSystemOptions): CentralSystem {
  const { clock } = options;
  const log = options.logger.child({ component: 'ocpp' });
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const links = new Map<string, ChargePointLink>();
  const passwords = new Map<string, Buffer>();
  for (const cp of options.chargePoints) {
    passwords.set(cp.id, digest(cp.password));
    links.set(cp.id, new ChargePointLink(cp.id, { clock, logger: log, requestTimeoutMs }));
  }
  // A transaction id unique across restarts of the central system (ids are 32-bit signed, §4.8).
  let nextTransactionId = Math.floor(clock.nowMs() / 1000) % 1_000_000_000;
  // Refused logins and requests come from anyone on the network: a budget of lines for all of them,
  // and one per configured charge point for its bad frames (a faulty charger does not mute another).
  const warnHostile = rateLimitedWarn(log);
  const warnFrom = new Map(options.chargePoints.map((cp) => [cp.id, rateLimitedWarn(log)]));
  const warnCp = (id: string, code: string, fields: Record<string, unknown>, message: string): void =>
    warnFrom.get(id)?.(code, { chargePoint: id, ...fields }, message);

  const server = new RPCServer({
    protocols: [ocppSubprotocol],
    strictMode: true,
    // Our own clock times requests (ChargePointLink); the library's timers only catch the lost ones.
    callTimeoutMs: 4 * requestTimeoutMs,
    pingIntervalMs: 30_000,
    respondWithDetailedErrors: false,
    // ocpp-rpc hands these to ws's WebSocketServer. No compression: a small deflated frame may inflate past any limit.
    wssOptions: { maxPayload: maxFrameBytes, perMessageDeflate: false },
  });
  server.on('error', (err: Error) => warnHostile('OCPP_REQUEST_REFUSED', { err: err.message }, 'OCPP WebSocket server error'));

  server.auth((accept, reject, handshake) => {
    const expected = passwords.get(handshake.identity);
    const given = handshake.password;
    if (!expected || !given || !timingSafeEqual(expected, digest(given))) {
      const why = !expected ? 'unknown charge point id' : given ? 'wrong password' : 'no password (basic auth) given';
      warnHostile(
        'OCPP_AUTH_REJECTED',
        { chargePoint: handshake.identity.slice(0, 64), remote: handshake.remoteAddress, why },
        'charge point refused',
      );
      reject(expected ? 401 : 404, '');
      return;
    }
    accept({});
  });

  server.on(
    'client',
    (
      client: OcppClient & {
        identity: string;
        handle: (m: string, h: (c: { params: unknown; messageId: string }) => unknown) => void;
        on: (e: string, l: (...a: never[]) => void) => void;
      },
    ) => {
      const link = links.get(client.identity);
      if (!link) return; // auth lets only configured ids through
      /**
       * What happens once the answer to a request is on its way (message id → action): the charge
       * point reads in order, so a request sent after its answer finds it knowing what the answer
       * told it (a transaction's id, that it is accepted). ocpp-rpc emits an outbound `message`
       * when it has handed the frame to the socket.
       */
      const afterAnswer = new Map<string, () => void>();
      client.on('message', ({ message, outbound }: { message: string | Buffer; outbound: boolean }) => {
        if (!outbound || afterAnswer.size === 0) return;
        let id: unknown;
        try {
          const frame: unknown = JSON.parse(String(message));
          id = Array.isArray(frame) && frame[0] === 3 ? frame[1] : undefined;
        } catch {
          return;
        }
        const then = typeof id === 'string' ? afterAnswer.get(id) : undefined;
        if (!then || typeof id !== 'string') return;
        afterAnswer.delete(id);
        then();
      });
      /** A charge point sends nothing but BootNotification before it is accepted (§4.2): any other request says it is. */
      const handle = (method: string, handler: (c: { params: unknown; messageId: string }) => unknown): void =>
        client.handle(method, (c) => {
          link.requested(client);
          return handler(c);
        });
      const at = (): string => new Date(clock.nowMs()).toISOString();
      const bad = (method: string, err: unknown): never => {
        warnCp(link.id, 'OCPP_BAD_MESSAGE', { method, err: err instanceof Error ? err.message : String(err) }, 'unusable OCPP request');
        throw createRPCError('FormationViolation', `unusable ${method}`);
      };
      const parse = <T>(
        schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: unknown } },
        method: string,
        params: unknown,
      ): T => {
        const r = schema.safeParse(params);
        return r.success ? r.data : bad(method, r.error);
      };

      client.handle('BootNotification', ({ messageId }) => {
        link.heard();
        afterAnswer.set(messageId, () => link.booted(client));
        return { status: 'Accepted', currentTime: at(), interval: options.heartbeatIntervalS };
      });
      handle('Heartbeat', () => {
        link.heard();
        return { currentTime: at() };
      });
      handle('StatusNotification', ({ params }) => {
        const p = parse(statusNotificationSchema, 'StatusNotification', params);
        link.status(p.connectorId, p.status, p.errorCode);
        return {};
      });
      handle('MeterValues', ({ params }) => {
        const p = parse(meterValuesSchema, 'MeterValues', params);
        link.meter(p.connectorId, readMeterValues(p.meterValue), p.transactionId);
        return {};
      });
      handle('StartTransaction', ({ params, messageId }) => {
        const p = parse(startTransactionSchema, 'StartTransaction', params);
        nextTransactionId = (nextTransactionId % 2_000_000_000) + 1;
        const transactionId = nextTransactionId;
        // The charge point learns the id from this answer: nothing naming it may go before (OCA TC_058_1_CS).
        afterAnswer.set(messageId, () => link.transactionStarted(p.connectorId, transactionId, p.meterStart, p.idTag));
        return { transactionId, idTagInfo: { status: 'Accepted' } };
      });
      handle('StopTransaction', ({ params }) => {
        const p = parse(stopTransactionSchema, 'StopTransaction', params);
        link.transactionStopped(p.transactionId, p.meterStop);
        return { idTagInfo: { status: 'Accepted' } };
      });
      handle('Authorize', ({ params }) => {
        link.authorized(parse(authorizeSchema, 'Authorize', params).idTag);
        return { idTagInfo: { status: 'Accepted' } };
      });
      client.on('badMessage', (e: { error?: Error }) => {
        warnCp(link.id, 'OCPP_BAD_MESSAGE', { err: e.error?.message }, 'malformed OCPP frame answered with CALLERROR');
      });
      // ws has closed the connection already (1009 for a message over maxFrameBytes, 1002/1007 for a broken frame).
      client.on('socketError', (err: NodeJS.ErrnoException) => {
        if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
          warnCp(link.id, 'OCPP_FRAME_TOO_LARGE', { limitBytes: maxFrameBytes }, 'OCPP message over the size limit: connection closed');
        else if (!peerGone.has(err.code ?? ''))
          warnCp(link.id, 'OCPP_BAD_MESSAGE', { err: err.message }, 'broken WebSocket frame: connection closed');
      });
      client.on('close', () => {
        afterAnswer.clear();
        link.detach(client);
      });
      link.attach(client);
      void link.configure([
        ['HeartbeatInterval', String(options.heartbeatIntervalS)],
        ['MeterValueSampleInterval', String(options.meterValueSampleIntervalS)],
        ['MeterValuesSampledData', 'Energy.Active.Import.Register,Power.Active.Import'],
      ]);
    },
  );

  const refuse = (req: IncomingMessage, socket: Duplex, status: number, why: string): void => {
    warnHostile('OCPP_REQUEST_REFUSED', { remote: req.socket.remoteAddress, status, why }, 'OCPP connection request refused');
    refuseUpgrade(socket, status);
  };
  // Everything a socket can bring to the listener is answered here: nothing thrown reaches the process.
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    const verdict = checkUpgrade(req.method, req.url, req.headers);
    if (!verdict.ok) return refuse(req, socket, verdict.status, verdict.why);
    server.handleUpgrade(req, socket as Socket, head).catch((err: unknown) => {
      warnHostile(
        'INTERNAL',
        { remote: req.socket.remoteAddress, err: err instanceof Error ? err.message : String(err) },
        'OCPP upgrade failed inside ocpp-rpc',
      );
      refuseUpgrade(socket, 400);
    });
  };

  let http: Server | undefined;
  return {
    async listen() {
      http = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }) : createHttpServer();
      http.on('upgrade', onUpgrade);
      http.on('request', (_req, res) => res.writeHead(404).end());
      // CONNECT (authority-form, a proxy's request) is nothing a charge point sends.
      http.on('connect', (req: IncomingMessage, socket: Duplex) => refuse(req, socket, 405, 'a CONNECT request'));
      http.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
        if (!peerGone.has(err.code ?? ''))
          warnHostile('OCPP_REQUEST_REFUSED', { why: `malformed HTTP request (${err.code ?? err.message})` }, 'OCPP connection request refused');
        refuseUpgrade(socket, err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400);
      });
      const h = http;
      await new Promise<void>((resolve, reject) => {
        h.once('error', (err) =>
          reject(
            new WattshiftError('OCPP_LISTEN_FAILED', `OCPP central system cannot listen on ${options.host}:${options.port}: ${err.message}`, {
              cause: err,
            }),
          ),
        );
        h.listen(options.port, options.host, () => resolve());
      });
      // Once listening, an error (no file descriptor left to accept a connection) costs that connection only.
      h.on('error', (err: NodeJS.ErrnoException) =>
        warnHostile('OCPP_REQUEST_REFUSED', { why: `cannot accept a connection (${err.code ?? err.message})` }, 'OCPP connection request refused'),
      );
      const port = (h.address() as AddressInfo).port;
      log.info({ host: options.host, port, tls: Boolean(options.tls) }, 'OCPP central system listening');
      return port;
    },
    link(id) {
      const l = links.get(id);
      if (!l) throw new WattshiftError('CONFIG_INVALID', `OCPP charge point "${id}" is not configured`);
      return l;
    },
    async close() {
      await server.close({ force: true });
      for (const l of links.values()) l.closeAll();
      const h = http;
      if (h) {
        const closing = new Promise<void>((resolve) => h.close(() => resolve()));
        h.closeAllConnections();
        await closing;
      }
    },
  };
}
