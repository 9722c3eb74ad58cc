/** Shared tools of the hostile suite: process figures from /proc, an MQTT client on the world's broker. */
import { readFileSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import type { DaemonLogLine, DaemonProcess, World } from '../helpers/daemon-harness.js';

/** Resident set size of a process, MiB (VmRSS). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** User + system CPU time of a process, seconds. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), counted after the ") " that ends the name.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A client on the world's broker (the demo's, or the world's own). */
export async function brokerClient(world: World): Promise<MqttClient> {
  const url = String((world.config.mqtt as { url: string }).url);
  return mqtt.connectAsync(url, { clientId: `hostile-${Math.random().toString(16).slice(2, 8)}`, reconnectPeriod: 0 });
}

/** Messages on `topic` (retained ones included) seen within `ms` of subscribing. */
export async function retainedOn(world: World, topic: string, ms = 500): Promise<Buffer[]> {
  const c = await brokerClient(world);
  const seen: Buffer[] = [];
  c.on('message', (t, payload, packet) => {
    if (t === topic && packet.retain) seen.push(payload);
  });
  await c.subscribeAsync(topic, { qos: 1 });
  await new Promise((r) => setTimeout(r, ms));
  await c.endAsync();
  return seen;
}

/** Lines of a daemon that match, counted. */
export function count(d: DaemonProcess, predicate: (l: DaemonLogLine) => boolean): number {
  return d.logs.filter(predicate).length;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Writes one line of figures to stderr (the suite's report). */
export function report(name: string, figures: Record<string, unknown>): void {
  process.stderr.write(`hostile ${name}: ${JSON.stringify(figures)}\n`);
}
