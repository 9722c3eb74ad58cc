/**
 * `wattshift hub provision --csv` against real peers: the sandbox API, a throwaway PostgreSQL
 * cluster, and Mosquitto started with the files the command prints, where the printed gateway
 * password must log in.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/dispatch.js';
import type { CliIo } from '../../src/cli/types.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startFleetBroker } from '../helpers/fleet-broker.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable, startPostgres, type PostgresCluster } from '../helpers/postgres.js';

const csv = [
  'gatewayId,userId,locationId,priceArea,meterPointId,resources',
  'gw-0001,user-0001,loc-0001,NO1,707057500000000011,res-0001-tank:HotWaterTank;res-0001-ev:Charger',
  'gw-0002,user-0002,loc-0002,SE3,735999100000000022,',
].join('\n');

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('wattshift hub provision', () => {
  let cluster: PostgresCluster;
  let sandbox: Sandbox;
  let dir: string;
  let configPath: string;
  const run = async (argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { stdout: (l) => void out.push(l), stderr: (l) => void err.push(l), env: {}, signals: process };
    return { code: await runCli(argv, io), out, err };
  };

  beforeAll(async () => {
    cluster = await startPostgres();
    sandbox = await startSandbox();
    dir = mkdtempSync(join(tmpdir(), 'wattshift-provision-'));
    const c = sandbox.credentials[0]!;
    configPath = join(dir, 'hub.yaml');
    writeFileSync(
      configPath,
      stringify({
        version: 1,
        spark: {
          baseUrl: sandbox.baseUrl,
          authUrl: sandbox.authUrl,
          forecastUrl: sandbox.forecastUrl,
          clientId: c.clientId,
          clientSecret: c.clientSecret,
        },
        database: { url: await cluster.createDatabase('provision') },
        broker: { url: 'mqtt://127.0.0.1:1', username: 'hub', password: 'hub-pw' },
        webhook: { secret: 'hook' },
      }),
    );
    writeFileSync(join(dir, 'homes.csv'), csv);
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates users, locations, resources and enrollments, registers the gateways and prints credentials that log in to Mosquitto', async () => {
    const first = await run(['hub', 'provision', '--config', configPath, '--csv', join(dir, 'homes.csv')]);
    expect(first.err, first.err.join('\n')).toEqual([]);
    expect(first.code).toBe(0);
    expect(first.out).toContain('created resource res-0001-tank (HotWaterTank)');
    expect(first.out).toContain('enrolled user user-0002');
    const partner = sandbox.engine.partner(sandbox.credentials[0]!.clientId);
    expect(partner.locations.get('loc-0001')?.meterPointIds).toEqual(['707057500000000011']);
    expect(partner.resources.get('res-0001-ev')?.locationId).toBe('loc-0001');

    const credential = first.out.map((l) => /^gateway gw-0001: broker user (\S+), password (\S+) /.exec(l)).find((m) => m !== null);
    expect(credential).toBeDefined();
    const at = (marker: string) => first.out.indexOf(marker);
    const passwd = first.out.slice(at('# Mosquitto password file:') + 1, at('# Mosquitto ACL file:')).join('\n');
    const acl = first.out.slice(at('# Mosquitto ACL file:') + 1).join('\n');
    expect(acl).toContain('topic read wattshift/fleet/v1/loc/loc-0001/events');
    expect(acl).toContain('topic read wattshift/fleet/v1/area/SE3/advice');
    expect(passwd).not.toContain(credential![2]!);
    const broker = await startFleetBroker({ passwd: `${passwd}\n`, acl: `${acl}\n` });
    try {
      const client = await mqtt.connectAsync(broker.url, {
        protocolVersion: 5,
        username: credential![1]!,
        password: credential![2]!,
        reconnectPeriod: 0,
      });
      await client.endAsync();
      await expect(
        mqtt.connectAsync(broker.url, { protocolVersion: 5, username: credential![1]!, password: 'wrong', reconnectPeriod: 0 }),
      ).rejects.toThrow();
    } finally {
      await broker.stop();
    }

    // A rerun changes nothing and makes no new passwords.
    const again = await run(['hub', 'provision', '--config', configPath, '--csv', join(dir, 'homes.csv')]);
    expect(again.code).toBe(0);
    expect(again.out).toContain('2 home(s) provisioned, 0 change(s)');
    expect(again.out.filter((l) => l.startsWith('gateway '))).toEqual([]);
  });

  it('moves a resource over to the type the CSV names (the API cannot change a type: deleted and created again), once', async () => {
    writeFileSync(join(dir, 'retyped.csv'), csv.replace('res-0001-tank:HotWaterTank', 'res-0001-tank:HVAC'));
    const moved = await run(['hub', 'provision', '--config', configPath, '--csv', join(dir, 'retyped.csv')]);
    expect(moved.err, moved.err.join('\n')).toEqual([]);
    expect(moved.out).toContain('re-created resource res-0001-tank as HVAC (was HotWaterTank)');
    const partner = sandbox.engine.partner(sandbox.credentials[0]!.clientId);
    expect(partner.resources.get('res-0001-tank')).toMatchObject({ resourceType: 'HVAC', locationId: 'loc-0001', userId: 'user-0001' });
    const again = await run(['hub', 'provision', '--config', configPath, '--csv', join(dir, 'retyped.csv')]);
    expect(again.out).toContain('2 home(s) provisioned, 0 change(s)');
  });

  it('refuses a CSV with bad rows before touching the API, naming each line', async () => {
    writeFileSync(join(dir, 'bad.csv'), 'gatewayId,userId,locationId,priceArea,meterPointId,resources\ngw/x,user,loc,XX1,123,res:Toaster\n');
    const usersBefore = sandbox.engine.partner(sandbox.credentials[0]!.clientId).users.size;
    const bad = await run(['hub', 'provision', '--config', configPath, '--csv', join(dir, 'bad.csv')]);
    expect(bad.code).toBe(78);
    const text = bad.err.join('\n');
    expect(text).toMatch(/line 2/);
    expect(text).toMatch(/gatewayId/);
    expect(text).toMatch(/priceArea/);
    expect(text).toMatch(/res:Toaster/);
    expect(sandbox.engine.partner(sandbox.credentials[0]!.clientId).users.size).toBe(usersBefore);
  });
});
