/**
 * Compiled tz data (TZif, RFC 8536, versions 2 to 4, as in /usr/share/zoneinfo): the UTC offset of
 * a zone at any instant, from its list of transitions and, after the last one, the POSIX TZ rule
 * of its footer. Parsing validates every count and index and never throws: data it cannot use
 * (version 1, leap seconds, a footer form `posix-tz.ts` does not read, any inconsistency) parses
 * to `null`, and the caller falls back to Intl.
 */
import { parsePosixTz, posixOffsetMs, type PosixTz } from './posix-tz.js';

export interface ZoneRules {
  /** Instants at which the offset changes, ms, strictly ascending. */
  transitionsMs: Float64Array;
  /** UTC offset from each transition on, ms. */
  offsetsMs: Float64Array;
  /** UTC offset before the first transition (time type 0), ms. */
  initialOffsetMs: number;
  /** Rule for instants after the last transition. */
  footer: PosixTz;
}

const HEADER_BYTES = 44;
/** RFC 8536 limits of a time type's UT offset, seconds. */
const MIN_UTOFF = -89_999;
const MAX_UTOFF = 93_599;

interface Header {
  version: number;
  isutcnt: number;
  isstdcnt: number;
  leapcnt: number;
  timecnt: number;
  typecnt: number;
  charcnt: number;
}

function readHeader(view: DataView, at: number): Header | null {
  if (at + HEADER_BYTES > view.byteLength) return null;
  const magic = view.getUint32(at);
  if (magic !== 0x545a6966) return null; // "TZif"
  const count = (i: number): number => view.getUint32(at + 20 + 4 * i);
  const header = {
    version: view.getUint8(at + 4),
    isutcnt: count(0), isstdcnt: count(1), leapcnt: count(2), timecnt: count(3), typecnt: count(4), charcnt: count(5),
  };
  const { isutcnt, isstdcnt, typecnt, charcnt } = header;
  if (typecnt === 0 || charcnt === 0 || (isutcnt !== 0 && isutcnt !== typecnt) || (isstdcnt !== 0 && isstdcnt !== typecnt)) return null;
  return header;
}

/** Bytes of a data block whose transition times are `timeBytes` wide. */
function blockBytes(h: Header, timeBytes: number): number {
  return h.timecnt * (timeBytes + 1) + h.typecnt * 6 + h.charcnt + h.leapcnt * (timeBytes + 4) + h.isstdcnt + h.isutcnt;
}

/** Parses a TZif file; `null` when it is not one this module can use (see the module comment). */
export function parseTzif(bytes: Uint8Array): ZoneRules | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v1 = readHeader(view, 0);
  // Version bytes are '2', '3', '4'; later versions promise to stay readable as these.
  if (!v1 || v1.version < 0x32) return null;
  const at = HEADER_BYTES + blockBytes(v1, 4);
  const h = readHeader(view, at);
  if (!h || h.leapcnt !== 0) return null;
  const dataAt = at + HEADER_BYTES;
  const footerAt = dataAt + blockBytes(h, 8);
  if (footerAt >= bytes.length) return null;

  const { timecnt, typecnt } = h;
  const typeOffsetsMs: number[] = [];
  const typesAt = dataAt + timecnt * 9;
  for (let i = 0; i < typecnt; i++) {
    const utoff = view.getInt32(typesAt + 6 * i);
    const isdst = view.getUint8(typesAt + 6 * i + 4);
    const abbrAt = view.getUint8(typesAt + 6 * i + 5);
    if (utoff < MIN_UTOFF || utoff > MAX_UTOFF || isdst > 1 || abbrAt >= h.charcnt) return null;
    typeOffsetsMs.push(utoff * 1000);
  }
  const transitionsMs = new Float64Array(timecnt);
  const offsetsMs = new Float64Array(timecnt);
  for (let i = 0; i < timecnt; i++) {
    // Signed 64-bit seconds; beyond 2^53 ms they are far from any instant asked about.
    const seconds = view.getInt32(dataAt + 8 * i) * 2 ** 32 + view.getUint32(dataAt + 8 * i + 4);
    const offsetMs = typeOffsetsMs[view.getUint8(dataAt + timecnt * 8 + i)];
    if (offsetMs === undefined || (i > 0 && !(seconds * 1000 > transitionsMs[i - 1]!))) return null;
    transitionsMs[i] = seconds * 1000;
    offsetsMs[i] = offsetMs;
  }
  const footer = readFooter(bytes, footerAt);
  if (!footer) return null;
  return { transitionsMs, offsetsMs, initialOffsetMs: typeOffsetsMs[0]!, footer };
}

/** The footer: "\n" TZ string "\n", ASCII. */
function readFooter(bytes: Uint8Array, at: number): PosixTz | null {
  if (bytes[at] !== 0x0a) return null;
  const end = bytes.indexOf(0x0a, at + 1);
  if (end < 0) return null;
  let text = '';
  for (let i = at + 1; i < end; i++) text += String.fromCharCode(bytes[i]!);
  return parsePosixTz(text);
}

/** UTC offset of the zone at instant `ms`, in ms. */
export function utcOffsetMs(rules: ZoneRules, ms: number): number {
  const times = rules.transitionsMs;
  const n = times.length;
  if (n === 0 || ms > times[n - 1]!) return posixOffsetMs(rules.footer, ms);
  if (ms < times[0]!) return rules.initialOffsetMs;
  // The last transition at or before `ms`.
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (times[mid]! <= ms) lo = mid;
    else hi = mid - 1;
  }
  return rules.offsetsMs[lo]!;
}
