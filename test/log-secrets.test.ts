/** A secret from the config never appears in what `wattshift run` prints, even at debug level. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { start } from './fixtures/config/cli-helpers.js';
import { tempDir } from './helpers/temp-dir.js';

describe('log redaction in run', { timeout: 120_000 }, () => {
  it('masks the client secret, MQTT password and webhook secret', async () => {
    const dir = tempDir('wattshift-log-');
    const clientSecret = 'CS-3f9a1c77e0b24d6c';
    const mqttPassword = 'MQ-8d2e55b1a9c04f13';
    const webhookSecret = 'WH-b71c0e9f2a6d4835';
    writeFileSync(join(dir, 'client-secret'), clientSecret);
    const creds = join(dir, 'creds');
    (await import('node:fs')).mkdirSync(creds);
    writeFileSync(join(creds, 'webhook-secret'), `${webhookSecret}\n`);
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      [
        'version: 1',
        'site: {timezone: Europe/Oslo, priceArea: NO1, currency: NOK, locationLimitKw: 11}',
        'spark: {clientId: c, clientSecret: {file: client-secret}, baseUrl: "http://127.0.0.1:9/ec", forecastUrl: "http://127.0.0.1:9/fc", authUrl: "http://127.0.0.1:9/token"}',
        'http: {port: 0}',
        'mqtt: {url: "mqtt://127.0.0.1:9", username: wattshift, password: {env: MQTT_PW}}',
        'events: {webhook: {enabled: true, port: 0, secret: {credential: webhook-secret}}}',
        `storage: {path: ${join(dir, 'w.db')}}`,
        'log: {level: debug}',
      ].join('\n'),
    );
    const p = start(['run', '--config', file], { MQTT_PW: mqttPassword, CREDENTIALS_DIRECTORY: creds });
    await p.waitFor('"msg":"running"');
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code).toBe(0);
    // The config was logged, so the secrets had every chance to leak.
    const loaded = r.stdout.split('\n').find((l) => l.includes('"msg":"config loaded"'));
    expect(loaded).toBeDefined();
    const logged = JSON.parse(loaded ?? '{}') as {
      config: { spark: { clientSecret: string }; mqtt: { url: string; password: string }; events: { webhook: { secret: string } } };
    };
    expect(logged.config.spark.clientSecret).toBe('[REDACTED]');
    expect(logged.config.mqtt.password).toBe('[REDACTED]');
    expect(logged.config.events.webhook.secret).toBe('[REDACTED]');
    for (const secret of [clientSecret, mqttPassword, webhookSecret]) {
      expect(r.stdout).not.toContain(secret);
      expect(r.stderr).not.toContain(secret);
    }
  });
});
