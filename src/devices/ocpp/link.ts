/**
 * The central system's side of one charge point: whether it is connected, what it last said per
 * connector (status, meter, transaction), and requests to it under the clock's timeout. Devices
 * subscribe to its events; the link outlives connections, so a charge point that reconnects
 * (or a central system that restarted) finds its devices again.
 */
// The package's default export: Node's ESM loader does not find `RPCError` among the CommonJS
// module's named exports (the package spreads its error classes into module.exports).
import ocppRpc from 'ocpp-rpc';
import { codeOf, WattshiftError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../ports.js';
import { withTimeout } from '../mqtt/util.js';
import { statusAnswerSchema, type ChargePointStatus, type MeterReading } from './messages.js';

const { RPCError } = ocppRpc;

/** The part of ocpp-rpc's server-side client the link uses. */
export interface OcppClient {
  call(method: string, params: unknown, options?: Record<string, unknown>): Promise<unknown>;
  close(options?: { code?: number; reason?: string; force?: boolean }): Promise<unknown>;
}

export type LinkEvent =
  | { type: 'connected' }
  | { type: 'disconnected' }
  | { type: 'heard' }
  | { type: 'status'; connectorId: number; status: ChargePointStatus; errorCode: string }
  | { type: 'meter'; connectorId: number; reading: MeterReading }
  /** `meterStartWh`: the register at the start, known when the StartTransaction itself was heard. */
  | { type: 'transaction'; connectorId: number; transactionId: number | undefined; meterStartWh?: number; idTag?: string }
  /** A card or token presented at the charge point (Authorize, §4.1): it names no connector. */
  | { type: 'authorized'; idTag: string };

/**
 * How long a new connection may stay silent before requests go to it, ms of clock time. A charge
 * point that boots sends its BootNotification as soon as its WebSocket opens, and nothing may be
 * sent to it before that is answered (OCPP 1.6 §4.2); one that reconnects after a network drop
 * or a restart of wattshift is already accepted and need not boot again.
 */
export const bootWaitMs = 5_000;

/** How many ended transactions a link remembers, so that late meter values do not bring one back. */
const endedKept = 16;

/** A connection's state before requests may go to it. */
interface Gate {
  client: OcppClient;
  open: boolean;
  opened: Promise<void>;
  release: () => void;
  /** Ends the wait for a BootNotification when the connection goes. */
  gone: AbortController;
}

export class ChargePointLink {
  private client: OcppClient | undefined;
  private gate: Gate | undefined;
  private readonly listeners = new Set<(e: LinkEvent) => void>();
  /** connectorId → running transaction id. */
  private readonly transactions = new Map<number, number>();
  /** Transactions the charge point ended (or lost in a reboot), newest last: never relearnt. */
  private readonly ended: number[] = [];
  private readonly log: Logger;

  constructor(
    readonly id: string,
    private readonly deps: { clock: Clock; logger: Logger; requestTimeoutMs: number },
  ) {
    this.log = deps.logger.child({ chargePoint: id });
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  transactionOn(connectorId: number): number | undefined {
    return this.transactions.get(connectorId);
  }

  subscribe(listener: (e: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: LinkEvent): void {
    for (const l of this.listeners) l(e);
  }

  attach(client: OcppClient): void {
    const old = this.client;
    this.client = client;
    this.gate?.gone.abort();
    let resolve = (): void => undefined;
    const opened = new Promise<void>((r) => (resolve = r));
    const gate: Gate = {
      client,
      open: false,
      opened,
      gone: new AbortController(),
      release: () => {
        gate.open = true;
        resolve();
      },
    };
    this.gate = gate;
    // No BootNotification as the first message: a charge point accepted before (a reconnection).
    void this.deps.clock.sleep(bootWaitMs, gate.gone.signal).then(
      () => this.open(client, 'no BootNotification'),
      () => undefined,
    );
    // A charge point that reconnects before its old socket timed out: the new connection wins.
    if (old) void old.close({ force: true }).catch(() => undefined);
    this.log.info('charge point connected');
    this.emit({ type: 'connected' });
  }

  detach(client: OcppClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.gate?.gone.abort();
    this.log.warn({ code: 'DEVICE_UNREACHABLE' }, 'charge point disconnected');
    this.emit({ type: 'disconnected' });
  }

  closeAll(): void {
    const c = this.client;
    this.client = undefined;
    this.gate?.gone.abort();
    if (c) void c.close({ force: true }).catch(() => undefined);
  }

  heard(): void {
    this.emit({ type: 'heard' });
  }

  /** Requests may go to `client` from now on. */
  private open(client: OcppClient, why: string): void {
    const gate = this.gate;
    if (gate?.client !== client || gate.open) return;
    gate.release();
    gate.gone.abort();
    this.log.debug({ why }, 'charge point ready for requests');
  }

  /**
   * The charge point sent a request other than BootNotification: it has been accepted (§4.2: it
   * sends nothing else before), so requests may go to it.
   */
  requested(client: OcppClient): void {
    this.open(client, 'it sent a request');
  }

  /**
   * The answer Accepted to a BootNotification has been sent on `client`. A charge point that boots
   * has lost every transaction the link held for it (a power loss, a reset): they are ended and
   * are not limited or stopped any more; one that survived a reboot is learnt again from its meter values.
   */
  booted(client: OcppClient): void {
    if (this.client !== client) return;
    for (const [connectorId, transactionId] of [...this.transactions]) this.end(connectorId, transactionId);
    this.open(client, 'BootNotification answered');
  }

  private end(connectorId: number, transactionId: number): void {
    this.transactions.delete(connectorId);
    this.ended.push(transactionId);
    if (this.ended.length > endedKept) this.ended.shift();
    this.emit({ type: 'transaction', connectorId, transactionId: undefined });
  }

  status(connectorId: number, status: ChargePointStatus, errorCode: string): void {
    // Available is a connector in no transaction (OCPP 1.6 §4.9): one still held here ended
    // without its StopTransaction reaching us, and must not be limited or stopped any more.
    const held = this.transactions.get(connectorId);
    if (status === 'Available' && held !== undefined) this.end(connectorId, held);
    this.emit({ type: 'status', connectorId, status, errorCode });
  }

  meter(connectorId: number, reading: MeterReading, transactionId: number | undefined): void {
    // After a restart of the central system, a running transaction is learnt from its meter values.
    // One the charge point ended is not brought back by meter values sent late (queued while offline).
    if (transactionId !== undefined && this.transactions.get(connectorId) !== transactionId && !this.ended.includes(transactionId))
      this.transactionStarted(connectorId, transactionId);
    this.emit({ type: 'meter', connectorId, reading });
  }

  authorized(idTag: string): void {
    this.emit({ type: 'heard' });
    this.emit({ type: 'authorized', idTag });
  }

  transactionStarted(connectorId: number, transactionId: number, meterStartWh?: number, idTag?: string): void {
    this.transactions.set(connectorId, transactionId);
    this.emit({
      type: 'transaction',
      connectorId,
      transactionId,
      ...(meterStartWh !== undefined ? { meterStartWh } : {}),
      ...(idTag !== undefined ? { idTag } : {}),
    });
    if (meterStartWh !== undefined) this.emit({ type: 'meter', connectorId, reading: { energyWh: meterStartWh } });
  }

  transactionStopped(transactionId: number, meterStopWh: number): void {
    for (const [connectorId, id] of [...this.transactions]) {
      if (id !== transactionId) continue;
      this.end(connectorId, transactionId);
      this.emit({ type: 'meter', connectorId, reading: { energyWh: meterStopWh } });
    }
    if (!this.ended.includes(transactionId)) {
      this.ended.push(transactionId);
      if (this.ended.length > endedKept) this.ended.shift();
    }
  }

  /**
   * Sends a request, once the connection is ready for it (its BootNotification answered, or none
   * coming); DEVICE_UNREACHABLE when not connected, DEVICE_TIMEOUT, OCPP_CALL_FAILED on a CALLERROR.
   */
  async call(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const client = this.client;
    if (!client) throw new WattshiftError('DEVICE_UNREACHABLE', `${this.id}: charge point not connected`, { details: { device: this.id } });
    // The wait for a boot is not the request's: its timeout starts when it is sent.
    await this.ready(client, signal, method);
    return withTimeout(this.deps.clock, this.deps.requestTimeoutMs, signal, `${this.id} ${method}`, async (s) => {
      try {
        return await client.call(method, params, { signal: s });
      } catch (err) {
        if (s.aborted) throw s.reason;
        if (err instanceof RPCError) {
          throw new WattshiftError('OCPP_CALL_FAILED', `${this.id} ${method}: ${err.rpcErrorCode} ${err.message}`, {
            cause: err,
            details: { method },
          });
        }
        throw new WattshiftError('DEVICE_UNREACHABLE', `${this.id} ${method}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    });
  }

  /** Resolves when requests may go to `client`; DEVICE_UNREACHABLE when it goes first. */
  private async ready(client: OcppClient, signal: AbortSignal, method: string): Promise<void> {
    const gate = this.gate;
    if (gate?.client !== client || gate.open) return;
    if (signal.aborted) throw signal.reason;
    const stop = new AbortController();
    try {
      await Promise.race([
        gate.opened,
        new Promise<never>((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true, signal: stop.signal });
          gate.gone.signal.addEventListener(
            'abort',
            () => {
              if (!gate.open)
                reject(
                  new WattshiftError('DEVICE_UNREACHABLE', `${this.id} ${method}: the connection closed before the charge point was ready`, {
                    details: { device: this.id },
                  }),
                );
            },
            { once: true, signal: stop.signal },
          );
        }),
      ]);
    } finally {
      stop.abort();
    }
  }

  /** A request answered with `{ status }`: a status not in `ok` (default: Accepted) is OCPP_CALL_FAILED. */
  async request(method: string, params: unknown, signal: AbortSignal, ok: readonly string[] = ['Accepted']): Promise<void> {
    const answer = statusAnswerSchema.safeParse(await this.call(method, params, signal));
    const status = answer.success ? answer.data.status : 'unreadable';
    if (!ok.includes(status)) {
      throw new WattshiftError('OCPP_CALL_FAILED', `${this.id} ${method}: ${status}`, { details: { method, status } });
    }
  }

  /** Sets configuration keys and asks for the connectors' status; failures are logged, not thrown. */
  async configure(keys: readonly [string, string][]): Promise<void> {
    const signal = new AbortController().signal;
    for (const [key, value] of keys) {
      await this.request('ChangeConfiguration', { key, value }, signal).catch((err: unknown) => this.warn(`ChangeConfiguration ${key}`, err));
    }
    await this.request('TriggerMessage', { requestedMessage: 'StatusNotification' }, signal).catch((err: unknown) =>
      this.warn('TriggerMessage', err),
    );
    // An idle connector sends no meter values (they are sampled during transactions): without this
    // its energy register stays unknown, the charger counts as down and no session is ever started.
    await this.request('TriggerMessage', { requestedMessage: 'MeterValues' }, signal).catch((err: unknown) =>
      this.warn('TriggerMessage MeterValues', err),
    );
  }

  private warn(what: string, err: unknown): void {
    const code = codeOf(err, 'OCPP_CALL_FAILED');
    this.log.warn({ code, err: err instanceof Error ? err.message : String(err) }, `${what} failed`);
  }
}
