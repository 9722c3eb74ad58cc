/**
 * The byte stream under the device MQTT connection: TCP, TLS, WebSocket or secure WebSocket, by
 * the URL's scheme. mqtt.js takes such a builder in its documented `MqttClient` constructor; ours
 * lets the packet size guard sit between the socket and mqtt.js's parser, from the first byte of
 * every (re)connect. The connection choices follow mqtt.js's own for these schemes: default ports
 * 1883/8883/80/443, the host name as the TLS server name, and TLS whenever a client certificate
 * is given.
 */
import { connect as tcpConnect, isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Duplex } from 'node:stream';
import { WebSocket, createWebSocketStream } from 'ws';

export interface TransportOptions {
  /** `mqtt://`, `mqtts://`, `ws://` or `wss://` (also `tcp:`, `ssl:`, `tls:`). */
  url: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** Verify the broker's certificate (default true). */
  rejectUnauthorized?: boolean;
}

type Scheme = 'tcp' | 'tls' | 'ws' | 'wss';

const schemes: Record<string, Scheme> = { 'mqtt:': 'tcp', 'tcp:': 'tcp', 'mqtts:': 'tls', 'ssl:': 'tls', 'tls:': 'tls', 'ws:': 'ws', 'wss:': 'wss' };
const defaultPorts: Record<Scheme, number> = { tcp: 1883, tls: 8883, ws: 80, wss: 443 };

/** A function that opens a new stream to the broker each time it is called (mqtt.js calls it on every connect). */
export function transportFor(options: TransportOptions): () => Duplex {
  const url = new URL(options.url);
  let scheme = schemes[url.protocol];
  if (scheme === undefined) throw new TypeError(`unsupported MQTT URL scheme: ${url.protocol}`);
  // A client certificate only means something over TLS.
  if (options.cert && options.key) scheme = scheme === 'ws' ? 'wss' : scheme === 'tcp' ? 'tls' : scheme;
  // URL keeps the brackets of an IPv6 literal; sockets want the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost';
  const port = url.port === '' ? defaultPorts[scheme] : Number(url.port);
  const tls = {
    ...(options.ca ? { ca: options.ca } : {}),
    ...(options.cert ? { cert: options.cert } : {}),
    ...(options.key ? { key: options.key } : {}),
    rejectUnauthorized: options.rejectUnauthorized !== false,
  };
  switch (scheme) {
    case 'tcp':
      return () => tcpConnect({ host, port });
    case 'tls':
      return () => tlsConnect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}), ...tls });
    case 'ws':
    case 'wss': {
      const target = `${scheme}://${url.host}${url.pathname}${url.search}`;
      return () => webSocketStream(target, scheme === 'wss' ? tls : {});
    }
  }
}

/** MQTT over WebSocket (the `mqtt` subprotocol), as a byte stream. */
function webSocketStream(target: string, tls: object): Duplex {
  const socket = new WebSocket(target, ['mqtt'], tls);
  const stream = createWebSocketStream(socket);
  // A socket closed by the broker ends the stream, so mqtt.js sees the connection go.
  socket.on('close', () => stream.destroy());
  return stream;
}

/**
 * mqtt.js's own connection options for a broker URL, read with the WHATWG URL parser. Given as
 * options rather than as a URL string, mqtt.js does not parse the URL with Node's legacy
 * `url.parse`, which Node 24 reports as deprecated (DEP0169).
 */
export function brokerUrlOptions(brokerUrl: string): { protocol: 'mqtt' | 'mqtts' | 'ws' | 'wss'; hostname: string; port: number; path?: string } {
  const url = new URL(brokerUrl);
  const scheme = schemes[url.protocol];
  if (scheme === undefined) throw new TypeError(`unsupported MQTT URL scheme: ${url.protocol}`);
  const protocol = ({ tcp: 'mqtt', tls: 'mqtts', ws: 'ws', wss: 'wss' } as const)[scheme];
  const port = url.port === '' ? defaultPorts[scheme] : Number(url.port);
  // mqtt.js writes a WebSocket's host back into a URL, where an IPv6 literal keeps its brackets; a socket wants it bare.
  if (scheme === 'ws' || scheme === 'wss') return { protocol, hostname: url.hostname || 'localhost', port, path: `${url.pathname}${url.search}` };
  return { protocol, hostname: url.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost', port };
}
