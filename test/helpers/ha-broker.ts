import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as netConnect } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import { connectAsync } from 'mqtt';
import type { IClientOptions, MqttClient } from 'mqtt';

/** A broker for a test: its URL and how to stop it. */
export interface TestBroker {
  name: 'aedes' | 'mosquitto';
  url: string;
  close(): Promise<void>;
}

/** aedes in-process on a free port of 127.0.0.1. */
export async function startAedes(): Promise<TestBroker> {
  const broker = await Aedes.createBroker();
  const server: Server = createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name: 'aedes',
    url: `mqtt://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const mosquittoPath = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => existsSync(p));

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Mosquitto (Debian package `mosquitto`) on a free port, with a temp config and no persistence. */
export async function startMosquitto(): Promise<TestBroker> {
  if (!mosquittoPath) throw new Error('mosquitto is not installed (apt-get install -y mosquitto)');
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-mosq-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', 'log_dest stderr', ''].join('\n'));
  const child = spawn(mosquittoPath, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mosquitto exited: ${stderr}`);
    if (await canConnect(port)) break;
    if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name: 'mosquitto',
    url: `mqtt://127.0.0.1:${port}`,
    close: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export function startBroker(name: 'aedes' | 'mosquitto'): Promise<TestBroker> {
  return name === 'aedes' ? startAedes() : startMosquitto();
}

/** A connected mqtt.js client with reconnects off (a test wants to see failures). */
export async function client(url: string, options: IClientOptions = {}): Promise<MqttClient> {
  return connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, ...options });
}

/** Collects messages on a filter; `next` waits for one matching a predicate. */
export async function recorder(c: MqttClient, filter: string) {
  const messages: { topic: string; payload: string; retain: boolean }[] = [];
  const waiters: { pred: (m: (typeof messages)[number]) => boolean; resolve: (m: (typeof messages)[number]) => void }[] = [];
  c.on('message', (topic, payload, packet) => {
    const m = { topic, payload: payload.toString(), retain: packet.retain };
    messages.push(m);
    for (const w of [...waiters]) {
      if (w.pred(m)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  await c.subscribeAsync(filter, { qos: 1 });
  return {
    messages,
    next(pred: (m: (typeof messages)[number]) => boolean, timeoutMs = 5000): Promise<(typeof messages)[number]> {
      const found = messages.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching message on ${filter} in ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          pred,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
    },
    clear() {
      messages.length = 0;
    },
  };
}

/** Reads the retained messages under a filter with a fresh client (waits for a quiet period). */
export async function retained(url: string, filter: string, quietMs = 300): Promise<Map<string, string>> {
  const c = await client(url);
  const out = new Map<string, string>();
  let last = Date.now();
  c.on('message', (topic, payload, packet) => {
    if (packet.retain) out.set(topic, payload.toString());
    last = Date.now();
  });
  await c.subscribeAsync(filter, { qos: 1 });
  last = Math.max(last, Date.now());
  while (Date.now() - last < quietMs) await new Promise((r) => setTimeout(r, 50));
  await c.endAsync();
  return out;
}
