/**
 * The world a benchmarked daemon process runs in: the demo environment (API sandbox, MQTT broker,
 * simulated Modbus tank, simulated go-e charger) on the benchmark's clock, the home registered,
 * and a config file for the daemon whose peers sit behind counting TCP relays.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Clock } from '../../src/ports.js';
import { silentLogger } from '../../src/log.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { createSparkClient } from '../../src/spark/client.js';
import { openStore } from '../../src/store/index.js';
import { register } from '../../src/registration.js';
import { startDemoEnvironment, type DemoEnvironment } from '../../src/demo/environment.js';
import { startTcpRelay, type TcpRelay } from './tcp-relay.js';

export const secretEnvName = 'WATTSHIFT_BENCH_CLIENT_SECRET';

export interface BenchWorld {
  env: DemoEnvironment;
  configPath: string;
  dbPath: string;
  /** Environment for the daemon process (the client secret). */
  daemonEnv: NodeJS.ProcessEnv;
  /** Bytes the daemon sent to its peers so far (through the relays). */
  socketBytesFromDaemon(): number;
  close(): Promise<void>;
}

/** Rewrites `url`'s host and port to the relay's. */
function via(url: string, relay: TcpRelay): string {
  const u = new URL(url);
  u.hostname = relay.host;
  u.port = String(relay.port);
  return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}

export async function startBenchWorld(options: { clock: Clock; startMs: number; dataDir: string }): Promise<BenchWorld> {
  const logger = silentLogger();
  const { clock, dataDir } = options;
  const env = await startDemoEnvironment({ clock, startMs: options.startMs, dataDir, logger });
  const relays = new Map<string, TcpRelay>();
  const relayFor = async (host: string, port: number): Promise<TcpRelay> => {
    const key = `${host}:${port}`;
    let r = relays.get(key);
    if (!r) {
      r = await startTcpRelay(host, port);
      relays.set(key, r);
    }
    return r;
  };
  const relayUrl = async (url: string): Promise<string> => {
    const u = new URL(url);
    const port = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
    return via(url, await relayFor(u.hostname, port));
  };
  try {
    // Register the home first, directly, as `wattshift register` would.
    const { config } = parseConfig(env.config);
    const spark = createSparkClient({ ...config.spark, clock, logger });
    const store = openStore({ path: config.storage.path, logger, clock });
    try {
      await register(config, { spark, store, logger, nowMs: clock.nowMs() });
    } finally {
      store.close();
      await spark.close();
    }

    const input = structuredClone(env.config) as ConfigInput & Record<string, unknown>;
    const s = input.spark as Record<string, unknown>;
    const secret = String(s['clientSecret']);
    s['clientSecret'] = { env: secretEnvName };
    for (const key of ['baseUrl', 'forecastUrl', 'authUrl'] as const) {
      if (typeof s[key] === 'string') s[key] = await relayUrl(s[key]);
    }
    const mqtt = input.mqtt as Record<string, unknown>;
    mqtt['url'] = await relayUrl(String(mqtt['url']));
    const buses = input.modbus as Record<string, Record<string, unknown>>;
    for (const bus of Object.values(buses)) {
      if (bus['type'] === 'tcp') {
        const r = await relayFor(String(bus['host']), Number(bus['port']));
        bus['host'] = r.host;
        bus['port'] = r.port;
      }
    }
    const configPath = join(dataDir, 'wattshift.yaml');
    writeFileSync(configPath, stringify(input), { mode: 0o600 });
    return {
      env,
      configPath,
      dbPath: config.storage.path,
      daemonEnv: { [secretEnvName]: secret },
      socketBytesFromDaemon: () => [...relays.values()].reduce((n, r) => n + r.bytesFromClients(), 0),
      async close() {
        for (const r of relays.values()) await r.close();
        await env.close();
      },
    };
  } catch (err) {
    for (const r of relays.values()) await r.close();
    await env.close();
    throw err;
  }
}
