/**
 * A size limit on every MQTT packet the broker sends us, applied to the raw byte stream before
 * mqtt.js buffers a packet. mqtt-packet collects a whole packet before it parses it, and MQTT
 * 3.1.1 has no way to tell the broker our maximum, so one 100 MB publish (retained: at every
 * start) would exhaust the heap. The guard reads each packet's fixed header (MQTT 3.1.1 §2.2: one
 * type byte, then the remaining length as 1–4 bytes of 7 bits).
 *
 * An oversized PUBLISH is not passed on: mqtt.js gets the same packet (flags, topic, packet id)
 * with an empty payload in its place, and the body is skipped unread. So the connection stays up
 * and mqtt.js acknowledges a QoS 1/2 message as usual; dropping it unacknowledged would leave it
 * in the broker's in-flight window, and closing the connection would bring a retained one back at
 * every resubscribe, a reconnect loop. Anything else over the limit (a broken broker, a malformed
 * length) cannot be skipped safely and ends the connection.
 *
 * The substitute uses MQTT 3.1.1 framing (no MQTT 5 properties): the device connection speaks 3.1.1.
 */
import { Duplex } from 'node:stream';

export interface OversizedPacket {
  /** Whole packet size, bytes, as its header declares. */
  bytes: number;
  /** The topic of a PUBLISH (not for other packet types). */
  topic?: string;
  /** The PUBLISH carried the retain flag (a stored message the broker re-sends at every subscribe). */
  retained?: boolean;
}

export interface PacketGuardEvents {
  /** An oversized PUBLISH was replaced by its empty-payload twin (passed on right after this call). */
  onSkipped: (p: OversizedPacket & { topic: string; retained: boolean }) => void;
  /** Something over the limit that cannot be skipped: the stream is destroyed after this call. */
  onFatal: (p: OversizedPacket) => void;
}

/** Longest variable-header prefix kept of an oversized PUBLISH: topic length, topic, packet id. */
const maxPrefixBytes = 2 + 65_535 + 2;

/**
 * The filter over the broker's bytes: `push` takes the next chunk and returns what to pass on;
 * it returns null once the stream must end (see `onFatal`).
 */
export function createPacketFilter(maxBytes: number, events: PacketGuardEvents): (chunk: Buffer) => Buffer[] | null {
  let header: number[] = [];
  let mode: 'header' | 'pass' | 'prefix' | 'skip' = 'header';
  /** Bytes left of the current packet's body (pass, prefix and skip modes). */
  let left = 0;
  let prefix: number[] = [];
  let total = 0;
  let dead = false;

  const prefixNeed = (): number | undefined => {
    if (prefix.length < 2) return undefined;
    const qos = ((header[0] as number) >> 1) & 3;
    return 2 + (((prefix[0] as number) << 8) | (prefix[1] as number)) + (qos > 0 ? 2 : 0);
  };

  return (chunk) => {
    if (dead) return null;
    const out: Buffer[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (mode === 'pass' || mode === 'skip') {
        const n = Math.min(left, chunk.length - i);
        if (mode === 'pass') out.push(chunk.subarray(i, i + n));
        left -= n;
        i += n;
        if (left === 0) mode = 'header';
        continue;
      }
      if (mode === 'prefix') {
        prefix.push(chunk[i] as number);
        i++;
        left--;
        const need = prefixNeed();
        if (need === undefined) continue;
        if (need > total - header.length || need > maxPrefixBytes) return fatal();
        if (prefix.length < need) continue;
        const topic = Buffer.from(prefix.slice(2, 2 + topicLength())).toString('utf8');
        events.onSkipped({ bytes: total, topic, retained: ((header[0] as number) & 1) === 1 });
        out.push(Buffer.from([header[0] as number, ...encodeLength(prefix.length), ...prefix]));
        header = [];
        prefix = [];
        mode = left > 0 ? 'skip' : 'header';
        continue;
      }
      header.push(chunk[i] as number);
      i++;
      if (header.length < 2) continue;
      const last = header[header.length - 1] as number;
      // Continuation bit set and fewer than 4 length bytes so far: the length goes on.
      if ((last & 0x80) !== 0 && header.length < 5) continue;
      const remaining = remainingLength(header);
      if (remaining < 0) return fatal();
      total = header.length + remaining;
      left = remaining;
      if (total <= maxBytes) {
        out.push(Buffer.from(header));
        header = [];
        mode = left > 0 ? 'pass' : 'header';
        continue;
      }
      const type = (header[0] as number) >> 4;
      const qos = ((header[0] as number) >> 1) & 3;
      if (type !== 3 || qos === 3 || remaining < 2) return fatal();
      mode = 'prefix';
    }
    return out;

    function topicLength(): number {
      return ((prefix[0] as number) << 8) | (prefix[1] as number);
    }
    function fatal(): null {
      dead = true;
      const isPublish = (header[0] as number) >> 4 === 3;
      const topic = isPublish && prefix.length >= 2 + topicLength() ? Buffer.from(prefix.slice(2, 2 + topicLength())).toString('utf8') : undefined;
      events.onFatal({ bytes: total, ...(topic !== undefined ? { topic } : {}) });
      return null;
    }
  };
}

/**
 * Wraps a connected stream: writes go straight through, reads pass the filter above. Must wrap the
 * stream before any data arrives (the framing starts at byte 0).
 */
export function guardPacketSize(inner: Duplex, maxBytes: number, events: PacketGuardEvents): Duplex {
  const filter = createPacketFilter(maxBytes, events);
  const outer = new Duplex({
    read() {
      inner.resume();
    },
    // Handed on at once and together, as if mqtt.js wrote to the socket itself: one packet's
    // pieces leave in one segment (apart, Nagle's algorithm would hold the later ones back for
    // the broker's delayed ACK); only the socket's own backpressure holds the next write back.
    writev(chunks, callback) {
      let ok = true;
      inner.cork();
      for (const { chunk, encoding } of chunks) ok = inner.write(chunk as Buffer, encoding);
      inner.uncork();
      if (ok) callback();
      else inner.once('drain', () => callback());
    },
    final(callback) {
      inner.end(callback);
    },
    destroy(err, callback) {
      inner.destroy();
      callback(err);
    },
  });
  inner.on('data', (chunk: Buffer) => {
    const parts = filter(chunk);
    if (parts === null) {
      outer.destroy();
      return;
    }
    let more = true;
    for (const p of parts) more = outer.push(p) && more;
    if (!more) inner.pause();
  });
  inner.on('end', () => outer.push(null));
  inner.on('error', (err) => outer.destroy(err));
  inner.on('close', () => outer.destroy());
  return outer;
}

/** The remaining length of a fixed header; -1 when it is malformed (more than 4 length bytes). */
function remainingLength(header: number[]): number {
  let value = 0;
  let multiplier = 1;
  for (let k = 1; k < header.length; k++) {
    const b = header[k] as number;
    value += (b & 0x7f) * multiplier;
    multiplier *= 128;
    if ((b & 0x80) === 0) return k === header.length - 1 ? value : -1;
  }
  return -1;
}

/** MQTT's variable-length encoding of a remaining length. */
function encodeLength(n: number): number[] {
  const bytes: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    bytes.push(b);
  } while (n > 0);
  return bytes;
}
