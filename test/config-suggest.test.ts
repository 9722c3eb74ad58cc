/**
 * `check` in one pass: every fault of a file reported at once, each typo with the name it was
 * probably meant to be, and the names there are where a reference points nowhere.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig, type ConfigProblem } from '../src/config/load.js';
import { closest } from '../src/config/suggest.js';
import { checkCommand } from '../src/cli/check.js';
import { machineChecks } from '../src/cli/config-checks.js';
import { isWattshiftError } from '../src/errors.js';
import { tempDir } from './helpers/temp-dir.js';
import { withoutMqtt, configEnv } from './helpers/config-document.js';

const env = configEnv;
const base = { ...withoutMqtt, modbus: { main: { type: 'tcp', host: '127.0.0.1' } } };
const tank = {
  id: 'tank',
  kind: 'hotWaterTank',
  switch: { type: 'modbus', bus: 'main', profile: 'generic-relay' },
  model: { volumeL: 200, elementKw: 3 },
};

function problemsOf(document: object): ConfigProblem[] {
  const file = join(tempDir('wattshift-suggest-'), 'config.yaml');
  writeFileSync(file, stringify(document));
  try {
    loadConfig(file, env, { machineChecks });
  } catch (err) {
    if (isWattshiftError(err)) return err.details?.problems as ConfigProblem[];
    throw err;
  }
  return [];
}

describe('closest', () => {
  it('finds a typo, a swap and a case slip, and nothing for a stranger', () => {
    expect(closest('volumL', ['volumeL', 'elementKw'])).toBe('volumeL');
    expect(closest('elemnetKw', ['volumeL', 'elementKw'])).toBe('elementKw');
    expect(closest('elvia', ['Elvia', 'lede'])).toBe('Elvia');
    expect(closest('tank', ['heatpump', 'charger'])).toBeUndefined();
  });
});

describe('check in one pass', () => {
  it('reports five faults of five kinds at once: keys, a value, a profile and a tariff', () => {
    const problems = problemsOf({
      ...base,
      reprots: {},
      site: { ...base.site, locationLimitKw: -1, tariff: 'elvai' },
      devices: [
        { ...tank, model: { volumL: 200, elementKw: 3 } },
        { ...tank, id: 'tank2', switch: { type: 'modbus', bus: 'main', profile: 'generic-realy' } },
      ],
    });
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.message]));
    expect(byPath['reprots']).toBe('unknown key (did you mean "reports"?)');
    expect(byPath['devices[0].model.volumL']).toBe('unknown key (did you mean "volumeL"?)');
    expect(byPath['site.locationLimitKw']).toBeDefined();
    expect(byPath['devices[1].switch.profile']).toMatch(
      /^unknown Modbus profile "generic-realy" \(did you mean "generic-relay"\?\) \(built-in profiles: .*generic-relay/,
    );
    expect(byPath['site.tariff']).toMatch(/^unknown tariff "elvai" \(did you mean "elvia"\?\); shipped tariffs: /);
    expect(problems, JSON.stringify(problems)).toHaveLength(5);
  });

  it('names the devices there are for a reference to an unknown one', () => {
    const problems = problemsOf({
      ...base,
      site: { ...base.site, fuse: { mainFuseA: 25, phases: 3, supply: 'TN', meter: 'tnak' } },
      devices: [tank],
    });
    expect(problems.find((p) => p.path === 'site.fuse.meter')?.message).toBe(
      'unknown device "tnak" (did you mean "tank"?) (devices in the config: tank)',
    );
  });

  it('gives its own hint, not the one that says to run check', async () => {
    const file = join(tempDir('wattshift-suggest-'), 'config.yaml');
    writeFileSync(file, stringify({ ...base, reprots: {} }));
    const err: string[] = [];
    const code = await checkCommand.run(
      { values: { config: file }, positionals: [] },
      { stdout: () => undefined, stderr: (l) => err.push(l), env, signals: process },
    );
    expect(code).toBe(78);
    expect(err.at(-1)).toBe('  hint: fix each key named above, then run check again');
    expect(err.join('\n')).not.toContain('run `wattshift check`');
  });
});
