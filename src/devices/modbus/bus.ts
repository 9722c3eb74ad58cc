/**
 * One Modbus bus: one connection (TCP, RTU over a serial port, or RTU frames over TCP) and one
 * serial request queue shared by every unit id on it — RS-485 is half duplex and most TCP
 * gateways serve one request at a time.
 *
 * - RTU over TCP (a transparent serial gateway: raw RTU frames with CRC on a TCP socket) uses
 *   modbus-serial's Telnet port; its `connectTcpRTUBuffered` speaks MBAP (Modbus TCP
 *   framing) despite the name, which such gateways do not understand.
 * - Requests run strictly one after another; the unit id is set per request.
 * - Per-request timeout (`timeoutMs` of the bus config) is a wire timeout kept by modbus-serial
 *   in real time → DEVICE_TIMEOUT; the connection stays up (other units may still answer).
 * - A lost connection fails the request in flight at once → DEVICE_UNREACHABLE; the next request
 *   reconnects. Failed connects back off exponentially on the injected Clock; requests during the
 *   back-off fail fast with DEVICE_UNREACHABLE instead of piling up.
 * - Garbled frames (CRC, length) → DEVICE_BAD_VALUE; Modbus exceptions → DEVICE_REJECTED
 *   (gateway exceptions 0x0A/0x0B → DEVICE_UNREACHABLE/DEVICE_TIMEOUT, busy → DEVICE_TIMEOUT).
 * - Going down and recovering are logged once each.
 */
import { connect as netConnect, type Socket } from 'node:net';
import type { ModbusRTU } from 'modbus-serial/ModbusRTU.js';
import { LossWatch } from './loss-watch.js';
import type { ModbusBusConfig } from '../../config/schema.js';
import { WattshiftError, type ErrorCode } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../ports.js';
import { backoffCeilingMs } from '../../timing/backoff.js';

export type RegisterFunction = 'holding' | 'input';
export type BitFunction = 'coil' | 'discrete';

export interface ModbusBus {
  readonly name: string;
  readRegisters(unitId: number, fn: RegisterFunction, address: number, count: number, signal?: AbortSignal): Promise<number[]>;
  readBits(unitId: number, fn: BitFunction, address: number, count: number, signal?: AbortSignal): Promise<boolean[]>;
  /** FC05. */
  writeCoil(unitId: number, address: number, value: boolean, signal?: AbortSignal): Promise<void>;
  /** FC06. */
  writeRegister(unitId: number, address: number, value: number, signal?: AbortSignal): Promise<void>;
  /** FC16. */
  writeRegisters(unitId: number, address: number, values: readonly number[], signal?: AbortSignal): Promise<void>;
  /** True while a connection is open. */
  isConnected(): boolean;
  /** Closes the connection; pending and later requests fail with DEVICE_UNREACHABLE. */
  close(): Promise<void>;
}

export interface ModbusBusDeps {
  clock: Clock;
  logger: Logger;
  /** Reconnect back-off after failed connects: initialMs · 2^(n−1), capped. Defaults 1 s .. 60 s. */
  backoff?: { initialMs?: number; maxMs?: number };
}

interface Connection {
  client: ModbusRTU;
  /** Fails the requests in flight when the connection is lost. */
  loss: LossWatch;
}

function describe(c: ModbusBusConfig): string {
  return c.type === 'rtu' ? `rtu:${c.path}` : `${c.type}://${c.host}:${c.port}`;
}

/** Maps anything modbus-serial throws to a WattshiftError with the right code. */
export function classifyModbusError(err: unknown, context: string): WattshiftError {
  if (err instanceof WattshiftError) return err;
  const e = err as { message?: string; errno?: string; code?: string; name?: string; modbusCode?: number };
  const message = e?.message ?? String(err);
  const make = (code: ErrorCode, retryable?: boolean): WattshiftError =>
    new WattshiftError(code, `${context}: ${message}`, { cause: err, retryable, details: { modbusCode: e?.modbusCode } });
  if (typeof e?.modbusCode === 'number') {
    if (e.modbusCode === 0x0a) return make('DEVICE_UNREACHABLE');
    if (e.modbusCode === 0x0b || e.modbusCode === 0x05 || e.modbusCode === 0x06) return make('DEVICE_TIMEOUT');
    return make('DEVICE_REJECTED', e.modbusCode === 0x04 ? true : undefined); // 4: server device failure
  }
  if (e?.errno === 'ETIMEDOUT' || /^Timed out/.test(message)) return make('DEVICE_TIMEOUT');
  if (/CRC error|Data length error|Unexpected data error|Invalid/i.test(message)) return make('DEVICE_BAD_VALUE');
  return make('DEVICE_UNREACHABLE');
}

class Bus implements ModbusBus {
  private conn: Connection | null = null;
  private tail: Promise<void> = Promise.resolve();
  private closed = false;
  private failures = 0;
  private nextAttemptAtMs = 0;
  private down = false;
  private readonly log: Logger;
  private readonly where: string;

  constructor(
    readonly name: string,
    private readonly config: ModbusBusConfig,
    private readonly deps: ModbusBusDeps,
  ) {
    this.log = deps.logger.child({ component: 'modbus', bus: name });
    this.where = describe(config);
  }

  isConnected(): boolean {
    return this.conn !== null && this.conn.client.isOpen;
  }

  readRegisters(unitId: number, fn: RegisterFunction, address: number, count: number, signal?: AbortSignal): Promise<number[]> {
    return this.enqueue(`read ${fn} ${address}+${count} unit ${unitId}`, unitId, signal, async (c) => {
      const res = fn === 'holding' ? await c.readHoldingRegisters(address, count) : await c.readInputRegisters(address, count);
      if (!Array.isArray(res.data) || res.data.length !== count) {
        throw new WattshiftError('DEVICE_BAD_VALUE', `${this.where}: expected ${count} registers, got ${res.data?.length}`);
      }
      return res.data;
    });
  }

  readBits(unitId: number, fn: BitFunction, address: number, count: number, signal?: AbortSignal): Promise<boolean[]> {
    return this.enqueue(`read ${fn} ${address}+${count} unit ${unitId}`, unitId, signal, async (c) => {
      const res = fn === 'coil' ? await c.readCoils(address, count) : await c.readDiscreteInputs(address, count);
      if (!Array.isArray(res.data) || res.data.length < count) {
        throw new WattshiftError('DEVICE_BAD_VALUE', `${this.where}: expected ${count} bits, got ${res.data?.length}`);
      }
      return res.data.slice(0, count);
    });
  }

  async writeCoil(unitId: number, address: number, value: boolean, signal?: AbortSignal): Promise<void> {
    await this.enqueue(`write coil ${address}=${value} unit ${unitId}`, unitId, signal, (c) => c.writeCoil(address, value));
  }

  async writeRegister(unitId: number, address: number, value: number, signal?: AbortSignal): Promise<void> {
    await this.enqueue(`write register ${address}=${value} unit ${unitId}`, unitId, signal, (c) => c.writeRegister(address, value));
  }

  async writeRegisters(unitId: number, address: number, values: readonly number[], signal?: AbortSignal): Promise<void> {
    await this.enqueue(`write registers ${address}+${values.length} unit ${unitId}`, unitId, signal, (c) => c.writeRegisters(address, [...values]));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.drop(new WattshiftError('DEVICE_UNREACHABLE', `${this.where}: bus closed`));
    await this.tail;
  }

  private enqueue<T>(what: string, unitId: number, signal: AbortSignal | undefined, op: (c: ModbusRTU) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new WattshiftError('DEVICE_UNREACHABLE', `${this.where}: bus closed`));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(signal?.reason);
      const job = async (): Promise<void> => {
        if (signal?.aborted) return;
        try {
          resolve(await this.execute(what, unitId, op));
        } catch (err) {
          reject(err);
        } finally {
          signal?.removeEventListener('abort', onAbort);
        }
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.tail = this.tail.then(job);
    });
  }

  private async execute<T>(what: string, unitId: number, op: (c: ModbusRTU) => Promise<T>): Promise<T> {
    if (this.closed) throw new WattshiftError('DEVICE_UNREACHABLE', `${this.where}: bus closed`);
    const conn = await this.ensureConnected();
    conn.client.setID(unitId);
    try {
      return await conn.loss.guard(op(conn.client));
    } catch (err) {
      const wErr = classifyModbusError(err, `${this.where} ${what}`);
      if (wErr.code === 'DEVICE_UNREACHABLE' && this.conn === conn) {
        this.drop(wErr);
        this.markDown(wErr);
      }
      throw wErr;
    }
  }

  private async ensureConnected(): Promise<Connection> {
    if (this.conn && this.conn.client.isOpen) return this.conn;
    if (this.conn) this.drop(new WattshiftError('DEVICE_UNREACHABLE', `${this.where}: connection closed`));
    const now = this.deps.clock.nowMs();
    if (now < this.nextAttemptAtMs) {
      throw new WattshiftError('DEVICE_UNREACHABLE', `${this.where}: not connected; next attempt in ${this.nextAttemptAtMs - now} ms`);
    }
    try {
      const conn = await this.connect();
      this.conn = conn;
      this.failures = 0;
      this.nextAttemptAtMs = 0;
      if (this.down) {
        this.down = false;
        this.log.info({ where: this.where }, 'modbus bus connected again');
      }
      return conn;
    } catch (err) {
      this.failures += 1;
      const initial = this.deps.backoff?.initialMs ?? 1000;
      const max = this.deps.backoff?.maxMs ?? 60_000;
      this.nextAttemptAtMs = now + backoffCeilingMs(this.failures, { baseMs: initial, maxMs: max });
      const wErr = new WattshiftError('DEVICE_UNREACHABLE', `${this.where}: cannot connect: ${(err as Error)?.message ?? String(err)}`, {
        cause: err,
      });
      this.markDown(wErr);
      throw wErr;
    }
  }

  private markDown(err: WattshiftError): void {
    if (this.down) return;
    this.down = true;
    this.log.warn({ code: err.code, where: this.where, err: err.message }, 'modbus bus down');
  }

  private drop(err: WattshiftError): void {
    const conn = this.conn;
    this.conn = null;
    if (!conn) return;
    conn.loss.fail(err);
    try {
      conn.client.destroy(() => undefined);
    } catch {
      // already gone
    }
  }

  private async connect(): Promise<Connection> {
    const ModbusClient = await loadModbusClient();
    const client = new ModbusClient();
    client.on('error', (e: unknown) => this.log.debug({ err: (e as Error)?.message }, 'modbus port error'));
    client.setTimeout(this.config.timeoutMs);
    const c = this.config;
    // TCP: our own socket, linked to the client once connected (modbus-serial's `linkTCP`/`linkTelnet`),
    // made with `net.connect` like every other client socket of the daemon, so Node's `net.client.socket`
    // diagnostics channel announces it (the simulation kernel watches loopback traffic through it).
    let socket: Socket | undefined;
    const linked = async (link: (s: Socket) => Promise<void>, host: string, port: number): Promise<void> => {
      const s = netConnect({ host, port });
      socket = s;
      await new Promise<void>((resolve, reject) => {
        s.once('connect', () => {
          s.off('error', reject);
          resolve();
        });
        s.once('error', reject);
      });
      await link(s);
    };
    const opening =
      c.type === 'rtu'
        ? client.connectRTUBuffered(c.path, { baudRate: c.baudRate, parity: c.parity, dataBits: c.dataBits, stopBits: c.stopBits })
        : c.type === 'rtuOverTcp'
          ? linked((s) => client.linkTelnet(s, { port: c.port }), c.host, c.port)
          : linked((s) => client.linkTCP(s, { port: c.port }), c.host, c.port);
    let guard: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        opening,
        new Promise<never>((_, reject) => {
          guard = setTimeout(() => reject(new Error(`connect timed out after ${c.timeoutMs * 2} ms`)), c.timeoutMs * 2);
        }),
      ]);
    } catch (err) {
      try {
        client.destroy(() => undefined);
      } catch {
        // nothing to clean up
      }
      socket?.destroy();
      throw err;
    } finally {
      clearTimeout(guard);
    }
    const loss = new LossWatch();
    client.on('close', () => loss.fail(new WattshiftError('DEVICE_UNREACHABLE', `${this.where}: connection lost`)));
    return { client, loss };
  }
}

let modbusClientClass: Promise<typeof ModbusRTU> | undefined;
/**
 * modbus-serial's client class, loaded on first use: the serial-port stack it brings along is needed
 * only with Modbus devices. Kept once loaded, so a reconnect (and the simulation kernel, which loads
 * it ahead) waits on no module loader. A CommonJS module seen from ESM: `default` is its
 * module.exports, the class is that object's `default`.
 */
export function loadModbusClient(): Promise<typeof ModbusRTU> {
  return (modbusClientClass ??= import('modbus-serial').then((m) => m.default.default));
}

/** Creates a bus; it connects lazily on the first request. */
export function createModbusBus(name: string, config: ModbusBusConfig, deps: ModbusBusDeps): ModbusBus {
  return new Bus(name, config, deps);
}

/** All buses of a config section, by name. */
export function createModbusBuses(configs: Record<string, ModbusBusConfig>, deps: ModbusBusDeps): Map<string, ModbusBus> {
  return new Map(Object.entries(configs).map(([name, cfg]) => [name, createModbusBus(name, cfg, deps)]));
}
