/**
 * One process of `scripts/bench-stack-rss.mjs`: loads the daemon's stack step by step and prints
 * the RSS after each (MiB) as one JSON line: `node [flags] stack-rss-probe.mjs`.
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);
const mib = () => Math.round((process.memoryUsage().rss / 1048576) * 10) / 10;
const out = { start: mib() };

const server = createServer((_req, res) => res.end('{"ok":true}'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/`;
out.httpServer = mib();

new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Oslo', hour: 'numeric', minute: 'numeric' }).formatToParts(Date.now());
out.intl = mib();

const { Agent, request } = require('undici');
const agent = new Agent();
const get = () => request(url, { dispatcher: agent });
out.undiciLoaded = mib();
await (await get()).body.text();
out.firstRequest = mib();

const { createTask } = require('node-cron');
const task = createTask('5 13 * * *', () => undefined, { timezone: 'Europe/Oslo' });
task.getNextRuns(3);
out.nodeCron = mib();

// V8 tiers wasm up in the background: the figure a second later is what stays.
await sleep(1500);
out.settled = mib();
await task.destroy();
server.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
