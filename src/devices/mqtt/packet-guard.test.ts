import { describe, expect, it } from 'vitest';
import { createPacketFilter } from './packet-guard.js';

/** An MQTT 3.1.1 PUBLISH: type 3 with flags, remaining length, topic, packet id (QoS > 0), payload. */
function publish(topic: string, payload: Buffer, opts: { qos?: 0 | 1 | 2; retain?: boolean; id?: number } = {}): Buffer {
  const qos = opts.qos ?? 0;
  const t = Buffer.from(topic);
  const body = Buffer.concat([
    Buffer.from([t.length >> 8, t.length & 0xff]),
    t,
    qos > 0 ? Buffer.from([(opts.id ?? 1) >> 8, (opts.id ?? 1) & 0xff]) : Buffer.alloc(0),
    payload,
  ]);
  const len: number[] = [];
  let n = body.length;
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    len.push(b);
  } while (n > 0);
  return Buffer.concat([Buffer.from([0x30 | (qos << 1) | (opts.retain ? 1 : 0), ...len]), body]);
}

const pingresp = Buffer.from([0xd0, 0x00]);
const puback = Buffer.from([0x40, 0x02, 0x00, 0x07]);

/** Feeds `stream` in pieces of `size` bytes; returns what passed and what was reported. */
function run(stream: Buffer, maxBytes: number, size: number) {
  const skipped: unknown[] = [];
  const fatal: unknown[] = [];
  const filter = createPacketFilter(maxBytes, { onSkipped: (p) => skipped.push(p), onFatal: (p) => fatal.push(p) });
  const out: Buffer[] = [];
  let ended = false;
  for (let i = 0; i < stream.length && !ended; i += size) {
    const parts = filter(stream.subarray(i, i + size));
    if (parts === null) ended = true;
    else out.push(...parts);
  }
  return { out: Buffer.concat(out), skipped, fatal, ended };
}

describe('MQTT packet filter', () => {
  const small = [
    publish('a/b', Buffer.from('hello')),
    pingresp,
    publish('c', Buffer.alloc(300, 7), { qos: 1, id: 9 }),
    puback,
    publish('d', Buffer.alloc(0)),
  ];

  it('passes packets under the limit byte for byte, however the stream is cut', () => {
    const stream = Buffer.concat(small);
    for (const size of [1, 2, 3, 7, 64, 4096]) expect(run(stream, 1024, size).out.equals(stream), String(size)).toBe(true);
  });

  it('replaces an oversized publish by its empty twin (flags, topic and packet id kept), however the stream is cut', () => {
    const big = publish('dev/x/state', Buffer.alloc(5000, 1), { qos: 1, retain: true, id: 0x1234 });
    const stream = Buffer.concat([small[0]!, big, ...small.slice(1)]);
    const expected = Buffer.concat([small[0]!, publish('dev/x/state', Buffer.alloc(0), { qos: 1, retain: true, id: 0x1234 }), ...small.slice(1)]);
    for (const size of [1, 5, 13, 1000, 100_000]) {
      const r = run(stream, 1024, size);
      expect(r.out.equals(expected), String(size)).toBe(true);
      expect(r.skipped).toEqual([{ bytes: big.length, topic: 'dev/x/state', retained: true }]);
      expect(r.ended).toBe(false);
    }
  });

  it('ends the stream on an oversized packet that is not a publish, or a malformed length', () => {
    expect(run(Buffer.from([0x90, 0xff, 0xff, 0x03, 0x00]), 1024, 1)).toMatchObject({ ended: true, fatal: [{ bytes: 65_535 + 4 }] });
    expect(run(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]), 1024, 2)).toMatchObject({ ended: true });
    // A topic longer than the packet.
    expect(run(Buffer.from([0x30, 0x80, 0x10, 0xff, 0xff]), 1024, 1)).toMatchObject({ ended: true });
  });
});
