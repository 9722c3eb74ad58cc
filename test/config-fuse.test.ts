/** The `site.fuse` section: the main fuse per phase and the meter that gives the phase currents. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { problemsOf as problemsOfConfig } from './helpers/config-problems.js';

const site = { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 };
const base = {
  version: 1,
  spark: { clientId: 'c', clientSecret: { env: 'CS' } },
  storage: { path: ':memory:' },
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
};
const env = { CS: 'client-secret-from-env' };
const han = { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/meter' } };
const shelly = { id: 'plug', kind: 'meter', meter: { type: 'shelly', topicPrefix: 'shellies/plug' }, model: { main: false } };
const withFuse = (fuse: Record<string, unknown>, devices: unknown[] = [han]) => ({ ...base, site: { ...site, fuse }, devices });

const problemsOf = (document: unknown) => problemsOfConfig(document, env);

describe('site.fuse config', () => {
  it('fills the margin, the raise delay, the staleness limit and the 1-phase charger line', () => {
    const { config } = parseConfig(withFuse({ mainFuseA: 25, phases: 3, supply: 'IT', meter: 'han' }), { env });
    expect(config.site.fuse).toEqual({
      mainFuseA: 25,
      phases: 3,
      supply: 'IT',
      meter: 'han',
      marginA: 1,
      raiseAfterS: 60,
      staleAfterS: 30,
      singlePhaseChargerLine: 1,
    });
  });

  it('refuses unknown keys, a bad supply or phase count, and out-of-range amps', () => {
    const problems = problemsOf(withFuse({ mainFuseA: 0, phases: 2, supply: 'TT', meter: 'han', marginA: 20, staleAfterS: 0 }));
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      ['site.fuse.mainFuseA', 'must be more than 0 A'],
      ['site.fuse.phases', 'expected one of 1, 3'],
      ['site.fuse.supply', 'expected "TN" or "IT"'],
      ['site.fuse.marginA', 'must be at most 10 A'],
      ['site.fuse.staleAfterS', 'must be at least 1 s'],
    ]);
    const unknown = problemsOf(withFuse({ mainFuseA: 25, phases: 3, supply: 'TN', meter: 'han', fuseA: 25 }));
    expect(unknown).toEqual([expect.objectContaining({ path: 'site.fuse.fuseA', message: 'unknown key' })]);
  });

  it('needs a meter device with an amsreader source', () => {
    expect(problemsOf(withFuse({ mainFuseA: 25, phases: 3, supply: 'TN', meter: 'nope' }))).toEqual([
      expect.objectContaining({
        path: 'site.fuse.meter',
        message: expect.stringMatching(/^unknown device "nope" \(devices in the config: han(, |\))/),
      }),
    ]);
    expect(problemsOf(withFuse({ mainFuseA: 25, phases: 3, supply: 'TN', meter: 'plug' }, [han, shelly]))).toEqual([
      expect.objectContaining({ path: 'site.fuse.meter', message: expect.stringMatching(/no per-phase currents/) }),
    ]);
  });
});
