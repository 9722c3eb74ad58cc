/**
 * A grammar-based generator of hostile HTTP/1.x requests for fuzzing a listener over raw TCP
 * (send them with `sendRaw` from http-fuzz-send.ts). Seeded: the same seed gives the same cases,
 * so a failure in CI is replayed by its seed and index.
 *
 * It covers request lines (methods, escapes, origin-, absolute-, authority- and asterisk-form
 * targets, versions, line endings), header floods and malformed headers, duplicate and
 * conflicting Content-Length and Transfer-Encoding, chunked bodies (well and badly framed), slow
 * and truncated deliveries, pipelining and WebSocket upgrade requests (for listeners that upgrade).
 */
import type { RawCase } from './http-fuzz-send.js';
import { rng } from '../../src/core/prng.js';

/** A small seeded PRNG (mulberry32): uniform floats in [0, 1). */
export const seededRandom = rng;

export interface FuzzOptions {
  /** Paths the listener serves (the fuzzer mutates them and mixes in others). */
  paths: readonly string[];
  /** Extra header lines worth trying on this listener (e.g. a signature header with junk). */
  headers?: readonly string[];
  /** Share of cases that ask for a WebSocket upgrade (default 0.05). */
  upgradeShare?: number;
  /** Share of cases delivered slowly, a few parts with pauses (default 0.1). */
  slowShare?: number;
  /** Longest total pause of a slow case, ms (default 1500). */
  maxSlowMs?: number;
  /** Chance that each part of a request is mutated rather than well-formed (default 0.25). */
  wild?: number;
}

export interface FuzzCase extends RawCase {
  /** Short description of the grammar choices, for failure messages. */
  label: string;
}

type Rng = () => number;
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const chance = (r: Rng, p: number): boolean => r() < p;

const methods = [
  'GET',
  'GET',
  'POST',
  'POST',
  'HEAD',
  'PUT',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'CONNECT',
  'PATCH',
  'PRI',
  'get',
  'G\u00e9T',
  'GET POST',
  '',
  'X'.repeat(300),
  'POST\t',
];
const versions = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/0.9', 'HTTP/2.0', 'HTTP/1.10', 'HTTP/1.1 extra', 'http/1.1', '', 'HTTP/9.9'];
const escapes = [
  '%00',
  '%2e%2e',
  '%2F',
  '%ZZ',
  '%',
  '%c0%af',
  '%e2%80%ae',
  '..',
  '.',
  '//',
  '\\',
  ';',
  '?',
  '#',
  '\u00ff',
  '\u0000',
  ' ',
  '\t',
  '@',
  ':',
  '[',
];
const oddTargets = [
  '//[',
  '//',
  '/../../etc/passwd',
  '*',
  '',
  ' ',
  '?',
  '#',
  '%',
  '/%',
  '/?%',
  '/#frag',
  '/\u00e9',
  '/' + 'a'.repeat(9000),
  'http://a:99999/',
  'http://[',
  'http://[::1]:80/healthz',
  'http://user:pw@localhost/',
  'https://localhost/',
  'http://localhost:-1/',
  'http://%00/',
  'http:///',
  'http:',
  'ftp://x/',
  'javascript:alert(1)',
  'localhost:99999',
  'a:80',
  '[::1]:443',
  '127.0.0.1',
  'http://a:b:c/',
];
const hosts = [
  'localhost',
  '127.0.0.1',
  '127.0.0.1:99999',
  '[::1]',
  '[::1',
  '[',
  ']',
  '',
  'evil.example',
  'a b',
  'localhost:',
  'x'.repeat(600),
  '\u00e9',
  '1.2.3.4:0',
];
const eols = ['\r\n', '\r\n', '\r\n', '\r\n', '\n', '\r', '\r\r\n'];

function target(r: Rng, options: FuzzOptions): string {
  const base = pick(r, options.paths);
  switch (int(r, 0, 5)) {
    case 0:
      return base;
    case 1:
      return pick(r, oddTargets);
    case 2: {
      const at = int(r, 0, base.length);
      return base.slice(0, at) + pick(r, escapes) + base.slice(at);
    }
    case 3:
      return `http://${pick(r, hosts)}${base}`;
    case 4:
      return `${base}?${pick(r, ['a=1', 'a=%', '=&=&', 'x'.repeat(int(r, 1, 4000)), 'a[]=1&a[x]=2'])}`;
    default:
      return base.toUpperCase();
  }
}

function contentLengths(r: Rng, bodyLength: number): string[] {
  switch (int(r, 0, 9)) {
    case 0:
      return [];
    case 1:
      return [`Content-Length: ${bodyLength}`, `Content-Length: ${bodyLength}`];
    case 2:
      return [`Content-Length: ${bodyLength}`, `Content-Length: ${bodyLength + int(r, 1, 50)}`];
    case 3:
      return [`Content-Length: ${bodyLength}, ${bodyLength + 1}`];
    case 4:
      return [`Content-Length: ${pick(r, ['-1', '+5', ' 5 ', '0x10', '1e3', 'abc', '99999999999999999999', '18446744073709551616', ''])}`];
    case 5:
      return [`Content-Length: ${bodyLength + int(r, 1, 1_000_000)}`];
    default:
      return [`Content-Length: ${bodyLength}`];
  }
}

function transferEncodings(r: Rng): { lines: string[]; chunked: boolean } {
  switch (int(r, 0, 11)) {
    case 0:
      return { lines: ['Transfer-Encoding: chunked'], chunked: true };
    case 1:
      return { lines: ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'], chunked: true };
    case 2:
      return { lines: ['Transfer-Encoding: gzip, chunked'], chunked: true };
    case 3:
      return { lines: ['Transfer-Encoding: chunked, identity'], chunked: true };
    case 4:
      return {
        lines: [`Transfer-Encoding: ${pick(r, ['xchunked', 'chunked ', ' chunked', 'CHUNKED', 'chunked\u0000', 'identity', ''])}`],
        chunked: chance(r, 0.5),
      };
    case 5:
      return { lines: ['Transfer-Encoding: chunked', 'Transfer-Encoding: identity'], chunked: true };
    default:
      return { lines: [], chunked: false };
  }
}

function chunkedBody(r: Rng, body: string): string {
  if (chance(r, 0.5)) {
    const parts: string[] = [];
    for (let at = 0; at < body.length;) {
      const n = int(r, 1, 64);
      parts.push(`${Math.min(n, body.length - at).toString(16)}\r\n${body.slice(at, at + n)}\r\n`);
      at += n;
    }
    return `${parts.join('')}0\r\n\r\n`;
  }
  return pick(r, [
    `zz\r\n${body}\r\n0\r\n\r\n`,
    `ffffffffffffffff\r\n${body}\r\n`,
    `5;ext=${'x'.repeat(int(r, 1, 5000))}\r\nhello\r\n0\r\n\r\n`,
    `5\r\nhelloXX0\r\n\r\n`,
    `3\r\nhello\r\n0\r\n\r\n`,
    `0\r\nTrailer: ${'t'.repeat(200)}\r\nX: y\r\n\r\n`,
    `-1\r\n\r\n`,
    `5\r\nhel`,
    `${body.length.toString(16)}\r\n${body}`,
  ]);
}

function bodyText(r: Rng): string {
  return pick(r, [
    '',
    '{}',
    '{"eventId":"x"}',
    '{"notificationId":"n","eventId":"e","payload":{"payloadType":"LocationLPC"}}',
    '[' + '['.repeat(int(r, 1, 3000)),
    '{"a":' + '1'.repeat(int(r, 1, 400)) + '}',
    'null',
    '\u0000\u0001\u00ff',
    'x'.repeat(int(r, 1, 20_000)),
    '{"__proto__":{"polluted":1}}',
    '\ud800',
  ]);
}

function headerLines(r: Rng, options: FuzzOptions, wild: boolean): string[] {
  const lines: string[] = [];
  const hostCount = wild ? pick(r, [1, 1, 0, 2]) : 1;
  for (let i = 0; i < hostCount; i++) lines.push(`Host: ${wild ? pick(r, hosts) : pick(r, ['localhost', '127.0.0.1'])}`);
  if (options.headers && chance(r, 0.5)) lines.push(pick(r, options.headers));
  if (!wild) return lines;
  if (chance(r, 0.3)) {
    // A flood: many small headers, or a few huge ones.
    const many = chance(r, 0.5);
    const n = many ? int(r, 50, 3000) : int(r, 1, 4);
    for (let i = 0; i < n; i++) lines.push(`X-F${i}: ${many ? 'v' : 'v'.repeat(int(r, 1000, 20_000))}`);
  }
  if (chance(r, 0.6)) {
    lines.push(
      pick(r, [
        'NoColonHere',
        ': empty-name',
        'Bad Name: x',
        'X-Fold: a\r\n continued',
        'X-Nul: a\u0000b',
        'X-Ctl: \u0007',
        'Expect: 100-continue',
        'Expect: 999-nonsense',
        'Connection: close',
        'Connection: keep-alive, Upgrade',
        'Content-Type: \u00ff',
        'X-Payload-Signature: ',
        'Authorization: Bearer ' + 'A'.repeat(3000),
        'Cookie: ' + 'c=1; '.repeat(500),
      ]),
    );
  }
  return lines;
}

function upgradeLines(r: Rng): string[] {
  return [
    `Connection: ${pick(r, ['Upgrade', 'upgrade', 'keep-alive, Upgrade', 'close'])}`,
    `Upgrade: ${pick(r, ['websocket', 'WebSocket', 'h2c', 'x'.repeat(300), ''])}`,
    ...(chance(r, 0.7) ? [`Sec-WebSocket-Key: ${pick(r, ['dGhlIHNhbXBsZSBub25jZQ==', '', 'not-base64', 'A'.repeat(500)])}`] : []),
    ...(chance(r, 0.7) ? [`Sec-WebSocket-Version: ${pick(r, ['13', '8', '', '-1', '99999'])}`] : []),
    ...(chance(r, 0.5) ? [`Sec-WebSocket-Protocol: ${pick(r, ['ocpp1.6', 'ocpp2.0.1', 'ocpp1.6, ocpp1.6', '', ','.repeat(200)])}`] : []),
  ];
}

/** Cuts `bytes` into `n` parts at random places. */
function split(r: Rng, bytes: Buffer, n: number): Buffer[] {
  const cuts = Array.from({ length: n - 1 }, () => int(r, 1, Math.max(1, bytes.length - 1))).sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    if (c > at) parts.push(bytes.subarray(at, c));
    at = Math.max(at, c);
  }
  return parts.length > 0 ? parts : [bytes];
}

/**
 * One request's bytes and a label of the choices made. Each part of the request (method, target,
 * version, line ends, framing, headers) is mutated on its own with probability `wild`, the rest
 * kept well-formed, so that many cases get past the parser into the listener's own code.
 */
function request(r: Rng, options: FuzzOptions, wild: number): { text: string; label: string[] } {
  const mutate = (): boolean => chance(r, wild);
  const method = mutate() ? pick(r, methods) : pick(r, ['GET', 'POST', 'POST', 'HEAD']);
  const t = mutate() ? target(r, options) : pick(r, options.paths);
  const version = mutate() ? pick(r, versions) : 'HTTP/1.1';
  const eol = mutate() ? pick(r, eols) : '\r\n';
  const body = chance(r, 0.5) ? bodyText(r) : '';
  const te = mutate() ? transferEncodings(r) : { lines: [], chunked: false };
  const cl =
    te.lines.length > 0 && chance(r, 0.6)
      ? []
      : mutate()
        ? contentLengths(r, Buffer.byteLength(body))
        : [`Content-Length: ${Buffer.byteLength(body)}`];
  const upgrade = chance(r, options.upgradeShare ?? 0.05) ? upgradeLines(r) : [];
  const headers = [...headerLines(r, options, mutate()), ...cl, ...te.lines, ...upgrade];
  const space = mutate() ? pick(r, [' ', '  ', '\t']) : ' ';
  const line = version === '' ? `${method}${space}${t}` : `${method}${space}${t}${space}${version}`;
  const payload = te.chunked ? chunkedBody(r, body) : body;
  const text = `${line}${eol}${headers.map((h) => h + eol).join('')}${eol}${payload}`;
  const label = [
    method.slice(0, 12),
    JSON.stringify(t.slice(0, 40)),
    version,
    `h${headers.length}`,
    te.lines.length > 0 ? 'te' : '',
    cl.length > 1 ? 'cl*' : '',
    upgrade.length > 0 ? 'upgrade' : '',
  ];
  return { text, label };
}

/** `count` cases from `seed`. */
export function fuzzCases(seed: number, count: number, options: FuzzOptions): FuzzCase[] {
  const r = seededRandom(seed);
  const cases: FuzzCase[] = [];
  for (let i = 0; i < count; i++) {
    const wild = options.wild ?? 0.25;
    const first = request(r, options, wild);
    const label = first.label;
    let bytes = Buffer.from(first.text, 'latin1');
    if (chance(r, 0.1)) {
      // Pipelined: a second request in the same writes.
      bytes = Buffer.concat([bytes, Buffer.from(request(r, options, wild).text, 'latin1')]);
      label.push('pipelined');
    }
    let end: RawCase['end'] = pick(r, ['wait', 'wait', 'wait', 'half-close', 'close']);
    if (chance(r, 0.15)) {
      bytes = bytes.subarray(0, int(r, 0, Math.max(0, bytes.length - 1)));
      label.push('truncated');
      end = pick(r, ['close', 'half-close', 'wait']);
    }
    const slow = chance(r, options.slowShare ?? 0.1);
    const parts = split(r, bytes, slow ? int(r, 2, 5) : int(r, 1, 3));
    const budget = options.maxSlowMs ?? 1_500;
    const pausesMs = parts.map((_, k) => (k === 0 ? 0 : slow ? Math.floor(budget / parts.length) : int(r, 0, 5)));
    if (slow) label.push('slow');
    cases.push({ label: `#${i} ${label.filter(Boolean).join(' ')} ${end}`, parts, pausesMs, end });
  }
  return cases;
}
