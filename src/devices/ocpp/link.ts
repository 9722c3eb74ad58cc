/**
 * The central system's side of one charge point: whether it is connected, what it last said per
 * connector (status, meter, transaction), and requests to it under the clock's timeout. Devices
 * subscribe to its events; the link outlives connections, so a charge point that reconnects
 * (or a central system that restarted) finds its devices again.
 */
// The package's default export: Node's ESM loader does not find `RPCError` among the CommonJS
// module's named exports (the package spreads its error classes into module.exports).
import ocppRpc from 'ocpp-rpc';
import { WattshiftError } from '../../errors.js';
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

export class ChargePointLink {
  private client: OcppClient | undefined;
  private readonly listeners = new Set<(e: LinkEvent) => void>();
  /** connectorId → running transaction id. */
  private readonly transactions = new Map<number, number>();
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
    // A charge point that reconnects before its old socket timed out: the new connection wins.
    if (old) void old.close({ force: true }).catch(() => undefined);
    this.log.info('charge point connected');
    this.emit({ type: 'connected' });
  }

  detach(client: OcppClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.log.warn({ code: 'DEVICE_UNREACHABLE' }, 'charge point disconnected');
    this.emit({ type: 'disconnected' });
  }

  closeAll(): void {
    const c = this.client;
    this.client = undefined;
    if (c) void c.close({ force: true }).catch(() => undefined);
  }

  heard(): void {
    this.emit({ type: 'heard' });
  }

  status(connectorId: number, status: ChargePointStatus, errorCode: string): void {
    // Available is a connector in no transaction (OCPP 1.6 §4.9): one still held here ended
    // without its StopTransaction reaching us, and must not be limited or stopped any more.
    const held = this.transactions.get(connectorId);
    if (status === 'Available' && held !== undefined) {
      this.transactions.delete(connectorId);
      this.emit({ type: 'transaction', connectorId, transactionId: undefined });
    }
    this.emit({ type: 'status', connectorId, status, errorCode });
  }

  meter(connectorId: number, reading: MeterReading, transactionId: number | undefined): void {
    // After a restart of the central system, a running transaction is learnt from its meter values.
    if (transactionId !== undefined && this.transactions.get(connectorId) !== transactionId) this.transactionStarted(connectorId, transactionId);
    this.emit({ type: 'meter', connectorId, reading });
  }

  authorized(idTag: string): void {
    this.emit({ type: 'heard' });
    this.emit({ type: 'authorized', idTag });
  }

  transactionStarted(connectorId: number, transactionId: number, meterStartWh?: number, idTag?: string): void {
    this.transactions.set(connectorId, transactionId);
    this.emit({ type: 'transaction', connectorId, transactionId, ...(meterStartWh !== undefined ? { meterStartWh } : {}), ...(idTag !== undefined ? { idTag } : {}) });
    if (meterStartWh !== undefined) this.emit({ type: 'meter', connectorId, reading: { energyWh: meterStartWh } });
  }

  transactionStopped(transactionId: number, meterStopWh: number): void {
    for (const [connectorId, id] of this.transactions) {
      if (id !== transactionId) continue;
      this.transactions.delete(connectorId);
      this.emit({ type: 'transaction', connectorId, transactionId: undefined });
      this.emit({ type: 'meter', connectorId, reading: { energyWh: meterStopWh } });
    }
  }

  /** Sends a request; DEVICE_UNREACHABLE when not connected, DEVICE_TIMEOUT, OCPP_CALL_FAILED on a CALLERROR. */
  async call(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const client = this.client;
    if (!client) throw new WattshiftError('DEVICE_UNREACHABLE', `${this.id}: charge point not connected`, { details: { device: this.id } });
    return withTimeout(this.deps.clock, this.deps.requestTimeoutMs, signal, `${this.id} ${method}`, async (s) => {
      try {
        return await client.call(method, params, { signal: s });
      } catch (err) {
        if (s.aborted) throw s.reason;
        if (err instanceof RPCError) {
          throw new WattshiftError('OCPP_CALL_FAILED', `${this.id} ${method}: ${err.rpcErrorCode} ${err.message}`, { cause: err, details: { method } });
        }
        throw new WattshiftError('DEVICE_UNREACHABLE', `${this.id} ${method}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    });
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
    await this.request('TriggerMessage', { requestedMessage: 'StatusNotification' }, signal).catch((err: unknown) => this.warn('TriggerMessage', err));
    // An idle connector sends no meter values (they are sampled during transactions): without this
    // its energy register stays unknown, the charger counts as down and no session is ever started.
    await this.request('TriggerMessage', { requestedMessage: 'MeterValues' }, signal).catch((err: unknown) => this.warn('TriggerMessage MeterValues', err));
  }

  private warn(what: string, err: unknown): void {
    const code = err instanceof WattshiftError ? err.code : 'OCPP_CALL_FAILED';
    this.log.warn({ code, err: err instanceof Error ? err.message : String(err) }, `${what} failed`);
  }
}
