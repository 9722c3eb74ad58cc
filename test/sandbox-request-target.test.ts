/** The sandbox reads request targets like the daemon's listeners: what is not a path is a 400, not a failure. */
import { afterAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { sendRaw } from './helpers/http-fuzz-send.js';

let sandbox: Sandbox | undefined;
afterAll(async () => sandbox?.close());

it('answers 400 to request targets that are not paths, and keeps serving', async () => {
  sandbox = await startSandbox({ autoTick: false });
  const port = Number(new URL(sandbox.authUrl).port);
  const status = async (target: string): Promise<number | null> =>
    (await sendRaw({ parts: [Buffer.from(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`)], pausesMs: [0], end: 'wait' }, { port })).status;
  for (const target of ['//[', 'http://a:99999/', '/%zz']) expect(await status(target), target).toBe(400);
  // A path that only looks like an authority is a path: no route has it.
  expect(await status('//a:99999/connect/token')).toBe(404);
  const res = await fetch(`${sandbox.authUrl}/connect/token`);
  expect(res.status).toBe(405);
});
