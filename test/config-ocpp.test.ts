/** The `ocpp` section and `ocpp` charger sources in the config. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { problemsOf as problemsOfConfig } from './helpers/config-problems.js';

const base = {
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
  spark: { clientId: 'c', clientSecret: { env: 'CS' } },
  storage: { path: ':memory:' },
};
const env = { CS: 'client-secret-from-env', CP_PASSWORD: 'sixteen-chars-ok' };
const charger = (source: Record<string, unknown>) => ({
  id: 'car',
  kind: 'evCharger',
  charger: { type: 'ocpp', chargePointId: 'garage', password: { env: 'CP_PASSWORD' }, ...source },
  model: { capacityKwh: 60 },
});

const problemsOf = (document: unknown) => problemsOfConfig(document, env);

describe('ocpp config', () => {
  it('fills the central system and connector defaults, with the password from a secret', () => {
    const { config: c } = parseConfig({ ...base, ocpp: {}, devices: [charger({})] }, { env });
    expect(c.ocpp).toEqual({ host: '0.0.0.0', port: 8887, heartbeatIntervalS: 60, meterValueSampleIntervalS: 60 });
    expect(
      parseConfig({ ...base, ocpp: { tls: { cert: 'c.pem', key: 'k.pem' } }, devices: [charger({})] }, { env, baseDir: '/etc/wattshift' }).config.ocpp
        ?.tls,
    ).toEqual({ cert: '/etc/wattshift/c.pem', key: '/etc/wattshift/k.pem' });
    expect(c.devices[0]).toMatchObject({
      charger: { type: 'ocpp', chargePointId: 'garage', password: 'sixteen-chars-ok', connectorId: 1, idTag: 'wattshift', leaseS: 600 },
    });
  });

  it('needs the ocpp section, a 16..40 character password and a charge point id that fits a URL', () => {
    expect(problemsOf({ ...base, devices: [charger({})] })).toEqual([
      expect.objectContaining({ path: 'devices[0].charger.type', message: expect.stringMatching(/needs the ocpp section/) }),
    ]);
    expect(problemsOf({ ...base, ocpp: {}, devices: [charger({ password: 'short' })] })).toEqual([
      expect.objectContaining({ path: 'devices[0].charger.password', message: expect.stringMatching(/16 to 40 characters/) }),
    ]);
    expect(problemsOf({ ...base, ocpp: {}, devices: [charger({ chargePointId: 'a/b' })] })[0]).toMatchObject({
      path: 'devices[0].charger.chargePointId',
    });
    expect(problemsOf({ ...base, ocpp: { tls: { cert: 'c.pem' } }, devices: [charger({})] })[0]).toMatchObject({ path: 'ocpp.tls.key' });
  });
});
