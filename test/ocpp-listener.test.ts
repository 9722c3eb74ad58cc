/**
 * The OCPP listener against hostile peers over real sockets on 127.0.0.1: upgrade requests no
 * charge point would send, a message over the frame limit, and floods of refused logins and bad
 * frames, which must cost a few log lines, not one each.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { maxFrameBytes } from '../src/devices/ocpp/central-system.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { closeOpened, password, startCentral, startMs } from './helpers/ocpp-world.js';
import { frame, opcode, openRawOcpp, rawRequest, upgradeRequest, type RawOcppSocket } from './helpers/ocpp-raw-socket.js';

afterEach(closeOpened);

async function central(): Promise<{ port: number; lines: Record<string, unknown>[] }> {
  const { logger, lines } = memoryLogger();
  const { port } = await startCentral(new ManualClock(startMs), logger);
  return { port, lines };
}

/** A Heartbeat CALL answered with its CALLRESULT: the connection works. */
async function heartbeat(cp: RawOcppSocket, id = 'hb'): Promise<string | undefined> {
  cp.sendText(JSON.stringify([2, id, 'Heartbeat', {}]));
  return cp.next((t) => t.startsWith(`[3,"${id}"`));
}

const genuine = upgradeRequest('cp1', password);
const withHeader = (name: string, value: string | undefined): string => {
  const lines = genuine.split('\r\n').filter((l) => !l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  if (value !== undefined) lines.splice(1, 0, `${name}: ${value}`);
  return lines.join('\r\n');
};
const withTarget = (target: string): string => genuine.replace(/^GET \S+/, `GET ${target}`);

describe('OCPP listener', () => {
  it('answers upgrade requests no charge point sends with a 4xx and closes them; a charge point connects after them', async () => {
    const { port, lines } = await central();
    const cases: [string, string, number][] = [
      ['a malformed percent-escape in the id', withTarget('/ocpp/%E0%A4%A'), 400],
      ['an overlong UTF-8 escape', withTarget('/ocpp/%C0%80'), 400],
      ['a lone %', withTarget('/ocpp/cp%'), 400],
      ['an absolute-form target', withTarget('http://127.0.0.1/ocpp/cp1'), 400],
      ['an authority-form target', withTarget('127.0.0.1:8887'), 400],
      ['the asterisk target', withTarget('*'), 400],
      ['a CONNECT (authority form)', 'CONNECT 127.0.0.1:8887 HTTP/1.1\r\nHost: 127.0.0.1:8887\r\n\r\n', 405],
      ['no id in the path', withTarget('/ocpp/'), 404],
      ['a POST', genuine.replace(/^GET/, 'POST'), 405],
      ['no Sec-WebSocket-Key', withHeader('Sec-WebSocket-Key', undefined), 400],
      ['a short Sec-WebSocket-Key', withHeader('Sec-WebSocket-Key', 'AAAA'), 400],
      ['Sec-WebSocket-Version 99', withHeader('Sec-WebSocket-Version', '99'), 400],
      ['no subprotocol', withHeader('Sec-WebSocket-Protocol', undefined), 400],
      ['another subprotocol only', withHeader('Sec-WebSocket-Protocol', 'ocpp2.0.1'), 400],
      ['a subprotocol twice', withHeader('Sec-WebSocket-Protocol', 'ocpp1.6, ocpp1.6'), 400],
      ['an empty subprotocol', withHeader('Sec-WebSocket-Protocol', 'ocpp1.6, ,x'), 400],
      ['Upgrade: h2c', withHeader('Upgrade', 'h2c'), 400],
      ['basic auth that is not base64', withHeader('Authorization', 'Basic !!!not-base64'), 401],
      ['basic auth of another id', withHeader('Authorization', `Basic ${Buffer.from(`cp2:${password}`).toString('base64')}`), 401],
      ['a header flood', genuine.replace('\r\n\r\n', `\r\n${'X-Flood: aaaaaaaaaaaaaaaa\r\n'.repeat(2000)}\r\n`), 431],
      ['a broken request line', 'GET /ocpp/cp1 HTTP/9.9 extra\r\nUpgrade: websocket\r\n\r\n', 400],
    ];
    const answers: Record<string, number> = {};
    for (const [name, request] of cases) answers[name] = (await rawRequest(port, request)).status;
    expect(answers).toEqual(Object.fromEntries(cases.map(([name, , status]) => [name, status])));
    const cp = await openRawOcpp(port, 'cp1', password);
    expect(await heartbeat(cp)).toBeDefined();
    cp.close();
    expect(lines.filter((l) => l['code'] === 'OCPP_REQUEST_REFUSED').length).toBeGreaterThan(0);
  });

  it('closes a connection that sends a message over the frame limit with 1009, logs it once, and takes the charge point back', async () => {
    const { port, lines } = await central();
    const cp = await openRawOcpp(port, 'cp1', password);
    // Just under the limit: a DataTransfer with a long data string is read and answered.
    const nearLimit = JSON.stringify([2, 'big', 'DataTransfer', { vendorId: 'x', data: 'a'.repeat(maxFrameBytes - 200) }]);
    cp.sendText(nearLimit);
    expect(await cp.next((t) => t.includes('"big"'))).toMatch(/^\[[34],"big"/);
    cp.sendText(JSON.stringify([2, 'huge', 'DataTransfer', { vendorId: 'x', data: 'a'.repeat(maxFrameBytes) }]));
    // Closed, not read: an answer to it would mean the central system took it in.
    expect(await Promise.race([cp.closed, cp.next((t) => t.includes('"huge"')).then((t) => t ?? 'no answer and no close')])).toBe(1009);
    // A frame announced at 99 MB is refused from its header, without waiting for its bytes.
    const again = await openRawOcpp(port, 'cp1', password);
    again.write(frame(opcode.text, '[2,"x","Heartbeat",{}]', { claimLength: 99_000_000 }));
    expect(await again.closed).toBe(1009);
    expect(lines.filter((l) => l['code'] === 'OCPP_FRAME_TOO_LARGE')).toHaveLength(2);
    const back = await openRawOcpp(port, 'cp1', password);
    expect(await heartbeat(back)).toBeDefined();
    back.close();
  });

  it('writes a few lines for a flood of refused logins and of bad frames, counting the rest', async () => {
    const { port, lines } = await central();
    const wrong = upgradeRequest('cp1', 'not-the-password-0');
    for (let i = 0; i < 300; i += 30) {
      const answers = await Promise.all(Array.from({ length: 30 }, () => rawRequest(port, wrong)));
      expect(answers.every((a) => a.status === 401)).toBe(true);
    }
    expect(lines.filter((l) => l['code'] === 'OCPP_AUTH_REJECTED').length).toBeLessThanOrEqual(5);

    const cp = await openRawOcpp(port, 'cp1', password);
    for (let i = 0; i < 300; i++)
      cp.sendText(JSON.stringify([2, `bad${i}`, 'StatusNotification', { connectorId: 1, status: 'Exploded', errorCode: 'NoError' }]));
    expect(await cp.next((t) => t.startsWith('[4,"bad299"'))).toBeDefined();
    expect(await heartbeat(cp)).toBeDefined();
    cp.close();
    expect(lines.filter((l) => l['code'] === 'OCPP_BAD_MESSAGE').length).toBeLessThanOrEqual(5);
  });
});
