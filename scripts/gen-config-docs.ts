/**
 * Writes docs/config.md (from the config schema), docs/errors.md (from src/errors.ts) and
 * docs/mqtt.md (from the MQTT layer run on an example home).
 * `--check` only compares and exits 1 when a committed file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderConfigDocs, renderErrorDocs } from '../src/config/docs.js';
import { renderMqttDocs } from '../src/ha/mqtt-docs.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outputs: [string, string][] = [
  [join(root, 'docs', 'config.md'), renderConfigDocs()],
  [join(root, 'docs', 'errors.md'), renderErrorDocs()],
  [join(root, 'docs', 'mqtt.md'), await renderMqttDocs()],
];
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, text] of outputs) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing: stale
  }
  if (current === text) continue;
  if (check) {
    console.error(`${file} is stale; run npm run docs`);
    stale += 1;
  } else {
    writeFileSync(file, text);
    console.log(`wrote ${file}`);
  }
}
process.exit(stale > 0 ? 1 : 0);
