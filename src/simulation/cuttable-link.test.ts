import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectLoopback, echo, exchange, loopbackServer } from '../../test/helpers/loopback.js';
import { startCuttableLink } from './cuttable-link.js';

/** What a connect to `port` comes to: the first error's code, or 'connected'. */
const tryConnect = (port: number): Promise<string> =>
  new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });

describe('cuttable link', () => {
  it('relays both ways, drops its connections and refuses new ones while cut, and relays again on the same port once restored', async () => {
    const server = await loopbackServer(echo);
    const link = await startCuttableLink(server.port);
    onTestFinished(() => link.close());
    const held = await connectLoopback(link.port);
    expect(String(await exchange(held, 'ping'))).toBe('ping');
    const closed = new Promise((resolve) => held.once('close', resolve));
    held.on('error', () => undefined);
    await link.cutNow();
    expect(link.cut).toBe(true);
    await closed;
    expect(await tryConnect(link.port)).toBe('ECONNREFUSED');

    await link.restore();
    expect(link.cut).toBe(false);
    expect(String(await exchange(await connectLoopback(link.port), 'again'))).toBe('again');
  });
});
