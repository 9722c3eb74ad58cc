/**
 * A size limit on every MQTT packet the broker sends us, applied to the raw byte stream before
 * mqtt.js buffers a packet. mqtt-packet collects a whole packet before it parses it, and MQTT
 * 3.1.1 has no way to tell the broker our maximum, so one 100 MB publish (retained: at every
 * start) would exhaust the heap. The guard reads only each packet's fixed header (MQTT 3.1.1 and
 * 5 §2.2: one type byte, then the remaining length as 1–4 bytes of 7 bits) and skips the rest;
 * the first packet over the limit ends the connection, which mqtt.js then re-opens.
 */
import type { Duplex } from 'node:stream';

export interface OversizedPacket {
  /** Whole packet size, bytes, as its header declares. */
  bytes: number;
  /** The topic of a PUBLISH when it arrived with the header (not for other packet types). */
  topic?: string;
}

/**
 * Watches a connected stream; calls `onOversized` and destroys the stream at the first packet
 * larger than `maxBytes`. Must be attached before any data arrives (the framing starts at byte 0).
 */
export function guardPacketSize(stream: Duplex, maxBytes: number, onOversized: (p: OversizedPacket) => void): void {
  let header: number[] = [];
  // Bytes of the current packet's body still to skip; -1 while reading a fixed header.
  let skip = -1;
  let tripped = false;
  stream.on('data', (chunk: Buffer) => {
    if (tripped) return;
    let i = 0;
    while (i < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - i);
        skip -= n;
        i += n;
        if (skip === 0) skip = -1;
        continue;
      }
      header.push(chunk[i] as number);
      i++;
      if (header.length < 2) continue;
      const last = header[header.length - 1] as number;
      // Continuation bit set and fewer than 4 length bytes so far: the length goes on.
      if ((last & 0x80) !== 0 && header.length < 5) continue;
      const remaining = remainingLength(header);
      const total = header.length + remaining;
      if (total > maxBytes || remaining < 0) {
        tripped = true;
        const isPublish = ((header[0] as number) >> 4) === 3;
        const topic = isPublish ? topicAt(chunk, i) : undefined;
        onOversized({ bytes: total, ...(topic !== undefined ? { topic } : {}) });
        stream.destroy();
        return;
      }
      header = [];
      skip = remaining > 0 ? remaining : -1;
    }
  });
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

/** A PUBLISH's topic (two length bytes, then UTF-8) when the chunk holds it whole. */
function topicAt(chunk: Buffer, at: number): string | undefined {
  if (at + 2 > chunk.length) return undefined;
  const len = chunk.readUInt16BE(at);
  if (at + 2 + len > chunk.length) return undefined;
  return chunk.toString('utf8', at + 2, at + 2 + len);
}
