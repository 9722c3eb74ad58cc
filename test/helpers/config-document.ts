/**
 * The smallest config document the daemon accepts with an MQTT broker, for tests that add one
 * section or device to it, and the environment that holds its client secret.
 */
export const configEnv = { CS: 'client-secret-from-env' };

export const baseDocument = {
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
  spark: { clientId: 'c', clientSecret: { env: 'CS' } },
  storage: { path: ':memory:' },
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
};

/** The same document without the broker, for tests of devices that need none. */
export const withoutMqtt = (({ mqtt: _mqtt, ...rest }) => rest)(baseDocument);
