import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../src/clock.js';
import { isWattshiftError, type WattshiftError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { createModbusBus, type ModbusBus } from '../src/devices/modbus/bus.js';
import { findFreePort } from '../src/sandbox/devices/modbus-tank.js';
import { memoryLogger, startModbusServer, startRawServer, withCrc } from './fixtures/modbus/servers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

function tcpBus(port: number, clock = new ManualClock(0), timeoutMs = 1000, logger = silentLogger()): ModbusBus {
  const bus = createModbusBus(
    'main',
    { type: 'tcp', host: '127.0.0.1', port, timeoutMs },
    { clock, logger, backoff: { initialMs: 1000, maxMs: 8000 } },
  );
  cleanups.push(() => bus.close());
  return bus;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isWattshiftError(err)) return err.code;
    return `non-wattshift: ${(err as Error)?.message ?? String(err)}`;
  }
  return 'resolved';
}

describe('modbus bus over TCP', () => {
  it('reads registers and bits for several unit ids over one connection', async () => {
    const seen: number[] = [];
    const srv = await startModbusServer({
      getInputRegister: (addr: number, unit: number) => (seen.push(unit), addr + unit),
      getHoldingRegister: (addr: number, unit: number) => (seen.push(unit), addr * 2 + unit),
      getCoil: (addr: number) => addr === 3,
      getDiscreteInput: (addr: number) => addr === 1,
    });
    cleanups.push(srv.close);
    const bus = tcpBus(srv.port);
    expect(await bus.readRegisters(1, 'input', 10, 1)).toEqual([11]);
    expect(await bus.readRegisters(7, 'holding', 10, 2)).toEqual([27, 29]);
    expect(await bus.readBits(2, 'coil', 2, 3)).toEqual([false, true, false]);
    expect(await bus.readBits(2, 'discrete', 0, 2)).toEqual([false, true]);
    expect(seen).toEqual([1, 7, 7]);
    expect(srv.server.socks.size).toBe(1);
    expect(bus.isConnected()).toBe(true);
  });

  it('serialises concurrent requests: never more than one in flight', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const srv = await startModbusServer({
      getHoldingRegister: (addr: number, _unit: number, cb: (e: Error | null, v: number) => void) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => {
          inFlight--;
          cb(null, addr);
        }, 3);
      },
    });
    cleanups.push(srv.close);
    const bus = tcpBus(srv.port);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => bus.readRegisters((i % 3) + 1, 'holding', i, 1)));
    expect(results.map((r) => r[0])).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(maxInFlight).toBe(1);
  });

  it('writes coils and registers (FC05, FC06, FC16)', async () => {
    const coils = new Map<number, boolean>();
    const regs = new Map<number, number>();
    const srv = await startModbusServer({
      setCoil: (addr: number, v: boolean) => void coils.set(addr, v),
      setRegister: (addr: number, v: number) => void regs.set(addr, v),
    });
    cleanups.push(srv.close);
    const bus = tcpBus(srv.port);
    await bus.writeCoil(1, 4, true);
    await bus.writeRegister(1, 10, 0xbeef);
    await bus.writeRegisters(1, 20, [1, 2, 3]);
    expect([...coils]).toEqual([[4, true]]);
    expect([...regs]).toEqual([
      [10, 0xbeef],
      [20, 1],
      [21, 2],
      [22, 3],
    ]);
  });

  it('times out on a unit that never answers, and keeps serving the others', async () => {
    const srv = await startModbusServer({
      getHoldingRegister: (addr: number, unit: number, cb: (e: Error | null, v: number) => void) => {
        if (unit !== 2) cb(null, 42);
      },
    });
    cleanups.push(srv.close);
    const bus = tcpBus(srv.port, new ManualClock(0), 150);
    expect(await codeOf(bus.readRegisters(2, 'holding', 0, 1))).toBe('DEVICE_TIMEOUT');
    expect(await bus.readRegisters(1, 'holding', 0, 1)).toEqual([42]);
  });

  it('maps Modbus exceptions to DEVICE_REJECTED', async () => {
    const srv = await startModbusServer({
      getInputRegister: () => {
        throw Object.assign(new Error('nope'), { modbusErrorCode: 2 });
      },
    });
    cleanups.push(srv.close);
    const bus = tcpBus(srv.port);
    let err: WattshiftError | undefined;
    await bus.readRegisters(1, 'input', 5, 1).catch((e) => (err = e));
    expect(err?.code).toBe('DEVICE_REJECTED');
    expect(err?.details?.['modbusCode']).toBe(2);
  });

  it('reports a garbled answer as DEVICE_BAD_VALUE', async () => {
    // answers FC04 for 2 registers with only 1 register of data
    const raw = await startRawServer((d, sock) => {
      const tid = d.readUInt16BE(0);
      const unit = d[6]!;
      const pdu = Buffer.from([unit, 0x04, 2, 0x12, 0x34]);
      const mbap = Buffer.alloc(6);
      mbap.writeUInt16BE(tid, 0);
      mbap.writeUInt16BE(pdu.length, 4);
      sock.write(Buffer.concat([mbap, pdu]));
    });
    cleanups.push(raw.close);
    const bus = tcpBus(raw.port, new ManualClock(0), 300);
    expect(await codeOf(bus.readRegisters(1, 'input', 0, 2))).toBe('DEVICE_BAD_VALUE');
  });

  it('fails the read in flight at once when the device disappears, backs off, and reconnects when it returns', async () => {
    const clock = new ManualClock(0);
    const { logger, lines } = memoryLogger();
    let hold = false;
    const vector = {
      getHoldingRegister: (_addr: number, _unit: number, cb: (e: Error | null, v: number) => void) => {
        if (!hold) cb(null, 7);
      },
    };
    let srv = await startModbusServer(vector);
    const port = srv.port;
    cleanups.push(() => srv.close());
    const bus = tcpBus(port, clock, 20_000, logger);
    expect(await bus.readRegisters(1, 'holding', 0, 1)).toEqual([7]);

    hold = true;
    const started = Date.now();
    const pending = codeOf(bus.readRegisters(1, 'holding', 0, 1));
    await new Promise((r) => setTimeout(r, 30));
    await srv.close();
    expect(await pending).toBe('DEVICE_UNREACHABLE');
    expect(Date.now() - started).toBeLessThan(10_000); // well before the 20 s request timeout

    // server gone: connect refused, then fast failures during the back-off
    expect(await codeOf(bus.readRegisters(1, 'holding', 0, 1))).toBe('DEVICE_UNREACHABLE');
    let err: WattshiftError | undefined;
    await bus.readRegisters(1, 'holding', 0, 1).catch((e) => (err = e));
    expect(err?.code).toBe('DEVICE_UNREACHABLE');
    expect(err?.message).toMatch(/next attempt in 1000 ms/);
    await clock.advance(1000);
    expect(await codeOf(bus.readRegisters(1, 'holding', 0, 1))).toBe('DEVICE_UNREACHABLE');
    await bus.readRegisters(1, 'holding', 0, 1).catch((e) => (err = e));
    expect(err?.message).toMatch(/next attempt in 2000 ms/); // doubled

    hold = false;
    srv = await startModbusServer(vector, { port });
    await clock.advance(2000);
    expect(await bus.readRegisters(1, 'holding', 0, 1)).toEqual([7]);
    expect(bus.isConnected()).toBe(true);

    const msgs = lines.map((l) => l['msg']);
    expect(msgs.filter((m) => m === 'modbus bus down')).toHaveLength(1);
    expect(msgs.filter((m) => m === 'modbus bus connected again')).toHaveLength(1);
    expect(lines.find((l) => l['msg'] === 'modbus bus down')?.['code']).toBe('DEVICE_UNREACHABLE');
  });

  it('reports a port where nothing listens as DEVICE_UNREACHABLE', async () => {
    const port = await findFreePort();
    const bus = tcpBus(port);
    expect(await codeOf(bus.readRegisters(1, 'input', 0, 1))).toBe('DEVICE_UNREACHABLE');
    expect(bus.isConnected()).toBe(false);
  });

  it('honours an abort signal for a queued request', async () => {
    const srv = await startModbusServer({
      getHoldingRegister: (a: number, _u: number, cb: (e: Error | null, v: number) => void) => setTimeout(() => cb(null, a), 20),
    });
    cleanups.push(srv.close);
    const bus = tcpBus(srv.port);
    const ac = new AbortController();
    const first = bus.readRegisters(1, 'holding', 1, 1);
    const second = bus.readRegisters(1, 'holding', 2, 1, ac.signal);
    ac.abort(new Error('stop'));
    await expect(second).rejects.toThrow('stop');
    expect(await first).toEqual([1]);
  });

  it('close() fails later requests with DEVICE_UNREACHABLE', async () => {
    const srv = await startModbusServer({ getHoldingRegister: () => 1 });
    cleanups.push(srv.close);
    const bus = tcpBus(srv.port);
    expect(await bus.readRegisters(1, 'holding', 0, 1)).toEqual([1]);
    await bus.close();
    expect(await codeOf(bus.readRegisters(1, 'holding', 0, 1))).toBe('DEVICE_UNREACHABLE');
    expect(bus.isConnected()).toBe(false);
  });
});

describe('modbus bus over RTU', () => {
  it('speaks RTU frames over TCP (rtuOverTcp) to a serial gateway', async () => {
    const frames: Buffer[] = [];
    const raw = await startRawServer((d, sock) => {
      frames.push(d);
      const unit = d[0]!;
      const count = d.readUInt16BE(4);
      const body = Buffer.alloc(3 + count * 2);
      body[0] = unit;
      body[1] = 0x04;
      body[2] = count * 2;
      for (let i = 0; i < count; i++) body.writeUInt16BE(0x1000 + d.readUInt16BE(2) + i, 3 + i * 2);
      sock.write(withCrc(body));
    });
    cleanups.push(raw.close);
    const bus = createModbusBus(
      'gw',
      { type: 'rtuOverTcp', host: '127.0.0.1', port: raw.port, timeoutMs: 1000 },
      { clock: new ManualClock(0), logger: silentLogger() },
    );
    cleanups.push(() => bus.close());
    expect(await bus.readRegisters(9, 'input', 0x48, 2)).toEqual([0x1048, 0x1049]);
    // the request was a raw RTU frame: unit, FC04, address, count, CRC
    expect(frames[0]!.subarray(0, 6)).toEqual(Buffer.from([9, 4, 0, 0x48, 0, 2]));
    expect(frames[0]!.length).toBe(8);
  });

  const hasPython = spawnSync('python3', ['-c', 'import pty'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!hasPython)('speaks RTU over a serial line (a pseudo-terminal with a Python RTU slave)', async () => {
    const script = fileURLToPath(new URL('./fixtures/modbus/rtu-slave.py', import.meta.url));
    const py = spawn('python3', [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    cleanups.push(async () => {
      py.stdin.end();
      py.kill();
    });
    const path = await new Promise<string>((resolve) => createInterface({ input: py.stdout }).once('line', resolve));
    const bus = createModbusBus(
      'rs485',
      { type: 'rtu', path, baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1, timeoutMs: 300 },
      {
        clock: new ManualClock(0),
        logger: silentLogger(),
      },
    );
    cleanups.push(() => bus.close());
    expect(await bus.readRegisters(5, 'input', 0x48, 2)).toEqual([0x148, 0x149]);
    expect(await codeOf(bus.readRegisters(6, 'input', 0x48, 2))).toBe('DEVICE_TIMEOUT'); // nobody at unit 6
    expect(await bus.readRegisters(5, 'holding', 7, 1)).toEqual([0x107]);
  });

  it('reports a missing serial port as DEVICE_UNREACHABLE', async () => {
    const bus = createModbusBus(
      'rs485',
      {
        type: 'rtu',
        path: '/dev/does-not-exist-wattshift',
        baudRate: 9600,
        parity: 'none',
        dataBits: 8,
        stopBits: 1,
        timeoutMs: 500,
      },
      { clock: new ManualClock(0), logger: silentLogger() },
    );
    cleanups.push(() => bus.close());
    expect(await codeOf(bus.readRegisters(1, 'input', 0, 2))).toBe('DEVICE_UNREACHABLE');
  });
});
