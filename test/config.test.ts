import { writeFileSync, chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, parseConfig, type ConfigProblem } from '../src/config/load.js';
import { isWattshiftError, type WattshiftError } from '../src/errors.js';
import { tempDir } from './helpers/temp-dir.js';

const base = {
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
  spark: { clientId: 'c', clientSecret: { env: 'CS' } },
  storage: { path: ':memory:' },
};
const env = { CS: 'client-secret-from-env' };

function tmp(): string {
  return tempDir('wattshift-config-');
}

function writeYaml(text: string): string {
  const file = join(tmp(), 'config.yaml');
  writeFileSync(file, text);
  return file;
}

function failure(fn: () => unknown): WattshiftError {
  try {
    fn();
  } catch (err) {
    if (isWattshiftError(err)) return err;
    throw err;
  }
  throw new Error('expected a WattshiftError');
}

function problems(err: WattshiftError): ConfigProblem[] {
  return err.details?.problems as ConfigProblem[];
}

const tank = {
  id: 'tank',
  kind: 'hotWaterTank',
  switch: { type: 'modbus', bus: 'main', profile: 'generic-relay' },
  model: { volumeL: 200, elementKw: 3 },
};

describe('parseConfig', () => {
  it('fills defaults and resolves an env secret', () => {
    const { config, secrets, warnings } = parseConfig(base, { env });
    expect(config.spark.clientSecret).toBe('client-secret-from-env');
    expect(secrets).toEqual(['client-secret-from-env']);
    expect(config.events.pollIntervalS).toBe(300);
    expect(config.mqtt).toBeUndefined();
    expect(config.http).toEqual({ enabled: true, host: '127.0.0.1', port: 8787, allowedHosts: [] });
    expect(config.planner.evFallbackWindow).toEqual({ start: '22:00', end: '06:00' });
    expect(warnings).toContain('devices: no device configured; wattshift will only watch prices');
  });

  it('returns a deep-frozen config', () => {
    const { config } = parseConfig({ ...base, modbus: { main: { type: 'tcp', host: 'h' } }, devices: [tank] }, { env });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.devices[0])).toBe(true);
    expect(() => {
      (config.site as { vatPct: number }).vatPct = 0;
    }).toThrow(TypeError);
  });

  it('fills tank defaults, including the standard draw profile', () => {
    const { config } = parseConfig({ ...base, modbus: { main: { type: 'tcp', host: 'h' } }, devices: [tank] }, { env });
    const d = config.devices[0];
    if (d?.kind !== 'hotWaterTank') throw new Error('expected a tank');
    expect(d.model.drawProfileKwh).toHaveLength(24);
    expect(d.model.legionella).toEqual({ enabled: true, tempC: 60, intervalDays: 7 });
    expect(d.resourceId).toBeNull();
    expect(d.switch).toEqual({ type: 'modbus', bus: 'main', unitId: 1, profile: 'generic-relay' });
  });

  it('reports every problem at once, each with its key path', () => {
    const err = failure(() =>
      parseConfig(
        {
          ...base,
          site: { ...base.site, timezone: 'Mars/Olympus', priceArea: 'NO9', bogus: true },
          devices: [{ ...tank, model: { volumeL: 'big', elementKw: 3 } }],
          extra: 1,
        },
        { env },
      ),
    );
    expect(err.code).toBe('CONFIG_INVALID');
    const paths = problems(err)
      .map((p) => p.path)
      .sort();
    expect(paths).toEqual(['devices[0].model.volumeL', 'extra', 'site.bogus', 'site.priceArea', 'site.timezone']);
    expect(problems(err).find((p) => p.path === 'extra')?.message).toBe('unknown key');
  });

  it('says the unit of a number out of range', () => {
    const err = failure(() =>
      parseConfig(
        {
          ...base,
          site: { ...base.site, locationLimitKw: 0 },
          planner: { frozenWindowMinutes: 300 },
          devices: [{ ...tank, model: { volumeL: 5000, elementKw: 50, floorC: 5, drawProfileKwh: [...Array(23).fill(0.5), 30] } }],
        },
        { env },
      ),
    );
    const byPath = Object.fromEntries(problems(err).map((p) => [p.path, p.message]));
    expect(byPath).toMatchObject({
      'site.locationLimitKw': 'must be more than 0 kW',
      'planner.frozenWindowMinutes': 'must be at most 240 minutes',
      'devices[0].model.elementKw': 'must be at most 20 kW',
      'devices[0].model.volumeL': expect.stringMatching(/^must be at most \d+ litres$/),
      'devices[0].model.floorC': expect.stringMatching(/^must be at least \d+ °C$/),
      'devices[0].model.drawProfileKwh[23]': 'must be at most 20 kWh',
    });
  });

  it('checks fields across sections', () => {
    const err = failure(() =>
      parseConfig(
        {
          ...base,
          devices: [
            tank,
            { ...tank, switch: { type: 'shelly', topicPrefix: 'x' } },
            { id: 'car', kind: 'evCharger', model: { capacityKwh: 60, minCurrentA: 10, maxCurrentA: 8 } },
            { id: 'm1', kind: 'meter' },
          ],
        },
        { env },
      ),
    );
    const byPath = Object.fromEntries(problems(err).map((p) => [p.path, p.message]));
    expect(byPath['devices[0].switch.bus']).toMatch(/unknown Modbus bus "main"/);
    expect(byPath['devices[1].id']).toMatch(/duplicate device id "tank"/);
    expect(byPath['devices[1].switch.type']).toMatch(/needs the mqtt section/);
    expect(byPath['devices[2].charger']).toMatch(/needs a charger source/);
    expect(byPath['devices[2].model.minCurrentA']).toMatch(/above maxCurrentA/);
    expect(byPath['devices[3].meter']).toMatch(/needs a meter source/);
  });

  it('takes several chargers and tanks, each planned on its own', () => {
    const charger = (id: string) => ({
      id,
      kind: 'evCharger',
      charger: { type: 'goe', topicPrefix: `go-eCharger/${id}` },
      model: { capacityKwh: 60 },
    });
    const shellyTank = (id: string) => ({ ...tank, id, switch: { type: 'shelly', topicPrefix: `shelly/${id}` } });
    const { config } = parseConfig(
      { ...base, mqtt: { url: 'mqtt://127.0.0.1' }, devices: [charger('c1'), charger('c2'), shellyTank('t1'), shellyTank('t2')] },
      { env },
    );
    expect(config.devices.map((d) => d.id)).toEqual(['c1', 'c2', 't1', 't2']);
  });

  it('rejects an unknown device kind and source type with the allowed values', () => {
    const err = failure(() => parseConfig({ ...base, devices: [{ ...tank, kind: 'boiler' }] }, { env }));
    expect(problems(err)[0]).toMatchObject({ path: 'devices[0].kind' });
    expect(problems(err)[0]?.message).toContain('"hotWaterTank"');
  });

  it('builds a valid config in code with defaultConfig', () => {
    const config = defaultConfig({ site: { priceArea: 'SE3', currency: 'SEK' }, log: { level: 'debug' } });
    expect(config.site).toMatchObject({ timezone: 'Europe/Oslo', priceArea: 'SE3', currency: 'SEK' });
    expect(config.log.level).toBe('debug');
    expect(config.storage.path).toBe(':memory:');
  });
});

describe('secrets', () => {
  it('reads a file relative to the config file, trimming the final newline', () => {
    const file = writeYaml('');
    const dir = join(file, '..');
    writeFileSync(join(dir, 'secret.txt'), 'from-a-file\n');
    writeFileSync(
      file,
      `version: 1\nsite: {timezone: UTC, priceArea: FI, currency: EUR, locationLimitKw: 17}\nspark: {clientId: c, clientSecret: {file: secret.txt}}\nstorage: {path: db.sqlite}\n`,
    );
    const { config, secrets, warnings } = loadConfig(file, {});
    expect(config.spark.clientSecret).toBe('from-a-file');
    expect(secrets).toContain('from-a-file');
    expect(warnings.join('\n')).not.toMatch(/inline/);
    expect(config.storage.path).toBe(join(dir, 'db.sqlite'));
  });

  it('reads a systemd credential and resolves storage.path against $STATE_DIRECTORY', () => {
    const creds = tmp();
    writeFileSync(join(creds, 'mqtt-password'), 'from-credentials');
    const { config } = parseConfig(
      { ...base, mqtt: { url: 'mqtt://127.0.0.1:1883', username: 'u', password: { credential: 'mqtt-password' } }, storage: { path: 'w.db' } },
      { env: { ...env, CREDENTIALS_DIRECTORY: creds, STATE_DIRECTORY: '/var/lib/wattshift' } },
    );
    expect(config.mqtt?.password).toBe('from-credentials');
    expect(config.storage.path).toBe('/var/lib/wattshift/w.db');
  });

  it('warns about a secret file readable by group or others, not about an owner-only one', () => {
    const dir = tmp();
    const open = join(dir, 'open-secret');
    const closed = join(dir, 'closed-secret');
    writeFileSync(open, 'x');
    chmodSync(open, 0o644);
    writeFileSync(closed, 'y');
    chmodSync(closed, 0o600);
    const warned = parseConfig({ ...base, spark: { clientId: 'c', clientSecret: { file: open } } }).warnings;
    expect(warned).toContain(`spark.clientSecret: secret file ${open} is readable by group or others (mode 0644); chmod 600 it`);
    expect(parseConfig({ ...base, spark: { clientId: 'c', clientSecret: { file: closed } } }).warnings.join('\n')).not.toMatch(/readable by group/);
  });

  it('refuses credentials inside a URL (they would reach logs), naming the key', () => {
    for (const [key, doc] of [
      ['mqtt.url', { mqtt: { url: 'mqtt://user:hunter2@broker.local:1883' } }],
      ['spark.baseUrl', { spark: { clientId: 'c', clientSecret: 's', baseUrl: 'https://u:p@api.example/v1' } }],
    ] as const) {
      const err = failure(() => parseConfig({ ...base, ...doc }));
      expect(err.code).toBe('CONFIG_INVALID');
      expect(problems(err).find((p) => p.path === key)?.message).toMatch(/credentials in a URL are refused/);
      expect(JSON.stringify(problems(err))).not.toContain('hunter2');
    }
  });

  it('warns about an inline secret but accepts it', () => {
    const { config, secrets, warnings } = parseConfig({ ...base, spark: { clientId: 'c', clientSecret: 'inline-secret' } });
    expect(config.spark.clientSecret).toBe('inline-secret');
    expect(secrets).toEqual(['inline-secret']);
    expect(warnings.some((w) => w.startsWith('spark.clientSecret: secret written inline'))).toBe(true);
  });

  it('fails with CONFIG_SECRET_UNREADABLE naming the key and the file', () => {
    const err = failure(() => parseConfig({ ...base, spark: { clientId: 'c', clientSecret: { file: '/nonexistent/secret' } } }));
    expect(err.code).toBe('CONFIG_SECRET_UNREADABLE');
    expect(problems(err)).toEqual([{ path: 'spark.clientSecret', message: 'cannot read secret file /nonexistent/secret: no such file' }]);
  });

  it('fails for an unset environment variable and a missing $CREDENTIALS_DIRECTORY', () => {
    const err = failure(() => parseConfig({ ...base, mqtt: { url: 'mqtt://h', password: { credential: 'p' } } }, { env: {} }));
    expect(err.code).toBe('CONFIG_SECRET_UNREADABLE');
    const msgs = problems(err).map((p) => `${p.path}: ${p.message}`);
    expect(msgs).toEqual([
      'spark.clientSecret: environment variable CS is not set',
      'mqtt.password: credential "p" needs $CREDENTIALS_DIRECTORY (systemd LoadCredential=), which is not set',
    ]);
  });

  it('defers credentials to a warning for check', () => {
    const { warnings } = parseConfig({ ...base, spark: { clientId: 'c', clientSecret: { credential: 'x' } } }, { env: {}, deferCredentials: true });
    expect(warnings[0]).toMatch(/^spark\.clientSecret: credential "x" not checked/);
  });

  it('rejects a malformed reference as an invalid config', () => {
    const err = failure(() => parseConfig({ ...base, spark: { clientId: 'c', clientSecret: { path: '/x' } } }));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(problems(err)[0]?.path).toBe('spark.clientSecret');
  });

  it.skipIf(process.getuid?.() === 0)('reports an unreadable (permission denied) secret file', () => {
    const dir = tmp();
    const f = join(dir, 's');
    writeFileSync(f, 'x');
    chmodSync(f, 0o000);
    const err = failure(() => parseConfig({ ...base, spark: { clientId: 'c', clientSecret: { file: f } } }));
    expect(problems(err)[0]?.message).toBe(`cannot read secret file ${f}: permission denied`);
  });
});

describe('loadConfig', () => {
  it('names a missing file', () => {
    const err = failure(() => loadConfig('/nonexistent/wattshift.yaml', env));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toBe('cannot read config file /nonexistent/wattshift.yaml: no such file');
  });

  it('gives YAML syntax errors a line and column', () => {
    const file = writeYaml('version: 1\nsite:\n  timezone: [Europe/Oslo\n');
    const err = failure(() => loadConfig(file, env));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(problems(err)[0]?.message).toMatch(/^YAML syntax error/);
    expect(problems(err)[0]?.line).toBeGreaterThanOrEqual(3);
  });

  it('rejects duplicate keys and an empty file', () => {
    expect(problems(failure(() => loadConfig(writeYaml('version: 1\nversion: 1\n'), env)))[0]?.message).toMatch(/unique/);
    expect(problems(failure(() => loadConfig(writeYaml('# nothing\n'), env)))[0]?.message).toBe('the config file is empty');
  });

  it('points schema problems at their line', () => {
    const file = writeYaml(
      [
        'version: 1',
        'site: {timezone: UTC, priceArea: FI, currency: EUR, locationLimitKw: 17}',
        'spark:',
        '  clientId: c',
        '  clientSecret: {env: CS}',
        '  colour: blue',
        'storage:',
        '  retentionDays: "long"',
      ].join('\n'),
    );
    const err = failure(() => loadConfig(file, env));
    expect(problems(err)).toEqual([
      { path: 'spark.colour', message: 'unknown key', line: 6, column: 3 },
      { path: 'storage.retentionDays', message: 'expected number, received string', line: 8, column: 18 },
    ]);
  });

  /** A config file whose only device is given by `lines` (the device list starts on line 6). */
  const withDevice = (lines: string[]): string =>
    writeYaml(
      [
        'version: 1',
        'site: {timezone: Europe/Oslo, priceArea: NO1, currency: NOK, locationLimitKw: 17}',
        'spark: {clientId: c, clientSecret: {env: CS}}',
        'mqtt: {url: "mqtt://127.0.0.1:1883"}',
        'devices:',
        ...lines,
      ].join('\n'),
    );

  it('points a bad cron expression or schedule time zone at its key path and line', () => {
    const file = withDevice([
      '  - id: car',
      '    kind: evCharger',
      '    charger: {type: goe, topicPrefix: go-e/1}',
      '    model:',
      '      capacityKwh: 60',
      '      departureSchedule:',
      '        cron: "30 7 * * mon-fry"',
      '        timezone: Europe/Olso',
    ]);
    const found = problems(failure(() => loadConfig(file, env)));
    expect(found.map((p) => [p.path, p.line])).toEqual([
      ['devices[0].model.departureSchedule.cron', 12],
      ['devices[0].model.departureSchedule.timezone', 13],
    ]);
    expect(found[0]?.message).toMatch(/^invalid cron expression "30 7 \* \* mon-fry": /);
    expect(found[1]?.message).toBe('expected an IANA time zone such as Europe/Oslo');
  });

  it('points a bad comfort window (cron, zone, temperature above the thermostat, unknown key) at its key path and line', () => {
    const file = withDevice([
      '  - id: tank',
      '    kind: hotWaterTank',
      '    switch: {type: shelly, topicPrefix: shelly-tank}',
      '    model:',
      '      volumeL: 200',
      '      elementKw: 2',
      '      comfort:',
      '        - {cron: "30 6 * * 1-5", tempC: 55}',
      '        - {cron: "30 25 * * *", tempC: 55}',
      '        - {cron: "0 7 * * 6,0", tempC: 55, timezone: CET}',
      '        - {cron: "0 7 * * *", tempC: 80}',
      '        - {cron: "0 7 * * *", tempC: 55, by: "07:00"}',
    ]);
    const found = problems(failure(() => loadConfig(file, env)));
    expect(found.map((p) => [p.path, p.line])).toEqual([
      ['devices[0].model.comfort[1].cron', 14],
      ['devices[0].model.comfort[2].timezone', 15],
      ['devices[0].model.comfort[4].by', 17],
      ['devices[0].model.comfort[3].tempC', 16],
    ]);
    expect(found[0]?.message).toMatch(/^invalid cron expression "30 25 \* \* \*": hour "25"/);
    expect(found[1]?.message).toBe('expected an IANA time zone such as Europe/Oslo');
    expect(found[2]?.message).toBe('unknown key');
    expect(found[3]?.message).toBe('comfort tempC (80) is above maxC (75): the thermostat never gets there');
  });

  it('accepts comfort windows, each with its own zone and label or the site zone', () => {
    const { config } = parseConfig({
      ...base,
      spark: { clientId: 'c', clientSecret: 'inline-secret' },
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [
        {
          id: 'tank',
          kind: 'hotWaterTank',
          switch: { type: 'shelly', topicPrefix: 'shelly-tank' },
          model: {
            volumeL: 200,
            elementKw: 2,
            comfort: [
              { cron: '30 6 * * 1-5', tempC: 55 },
              { cron: '0 20 * * 0', tempC: 60, label: 'Sunday bath', timezone: 'Europe/Berlin' },
            ],
          },
        },
      ],
    });
    const tank = config.devices[0];
    expect(tank?.kind === 'hotWaterTank' && tank.model.comfort).toEqual([
      { cron: '30 6 * * 1-5', tempC: 55 },
      { cron: '0 20 * * 0', tempC: 60, label: 'Sunday bath', timezone: 'Europe/Berlin' },
    ]);
  });

  it('accepts a weekday departure schedule', () => {
    const { config } = parseConfig({
      ...base,
      spark: { clientId: 'c', clientSecret: 'inline-secret' },
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [
        {
          id: 'car',
          kind: 'evCharger',
          charger: { type: 'goe', topicPrefix: 'go-e/1' },
          model: { capacityKwh: 60, departureSchedule: { cron: '30 7 * * 1-5' } },
        },
      ],
    });
    const car = config.devices[0];
    expect(car?.kind === 'evCharger' && car.model.departureSchedule).toEqual({ cron: '30 7 * * 1-5' });
  });

  it('keeps the example file valid', () => {
    const creds = tmp();
    writeFileSync(join(creds, 'spark-client-secret'), 'example-secret');
    const { config, secrets } = loadConfig('config.example.yaml', { CREDENTIALS_DIRECTORY: creds });
    expect(config.devices.map((d) => d.kind)).toEqual(['hotWaterTank', 'heatPump', 'evCharger', 'meter', 'zone', 'zone', 'solar', 'solar']);
    expect(secrets).toEqual(['example-secret']);
    expect(readFileSync('config.example.yaml', 'utf8')).toMatch(/^version: 1$/m);
  });
});
