/** docs/mqtt.md is what the MQTT layer really publishes and accepts (regenerate with `npm run docs`). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderMqttDocs } from '../src/ha/mqtt-docs.js';
import { commandFields, deviceScalarFields } from '../src/ha/topics.js';

describe('docs/mqtt.md', () => {
  it('matches the MQTT layer run on the example home', async () => {
    expect(readFileSync('docs/mqtt.md', 'utf8')).toBe(await renderMqttDocs());
  });

  it('covers every state field and every command field of the code', async () => {
    const doc = await renderMqttDocs();
    for (const field of deviceScalarFields) expect(doc, field).toMatch(new RegExp(`\`wattshift/\\w+/${field}\` \\| yes \\| 1 \\|`));
    for (const field of Object.keys(commandFields)) expect(doc, field).toContain(`| \`set/${field}\` |`);
    expect(doc).toContain('`wattshift/response/<device>/set`');
  });

  it('is linked from the README', () => {
    expect(readFileSync('README.md', 'utf8')).toContain('(docs/mqtt.md)');
  });
});
