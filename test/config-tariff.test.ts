/**
 * `site.tariff`: shipped tariffs by name, tariff files by path, inline tariffs; every problem
 * reported through the config loader with the key path (so `wattshift check` shows it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig, parseConfig, type ConfigProblem } from '../src/config/load.js';
import { builtinTariffNames, parseTariff, siteTariff, tariffDir } from '../src/config/tariff-file.js';
import { isWattshiftError } from '../src/errors.js';
import { tempDir } from './helpers/temp-dir.js';

const site = { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 };
const doc = (siteOver: Record<string, unknown>) => ({
  version: 1,
  site: { ...site, ...siteOver },
  spark: { clientId: 'c', clientSecret: 's' },
  storage: { path: ':memory:' },
});

function problems(fn: () => unknown): ConfigProblem[] {
  try {
    fn();
  } catch (err) {
    if (isWattshiftError(err) && err.code === 'CONFIG_INVALID') return (err.details as { problems: ConfigProblem[] }).problems;
    throw err;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('shipped tariffs', () => {
  const names = builtinTariffNames();

  it('include Norway, Sweden and Denmark', () => {
    const currencies = names.map((n) => parseTariff(readFileSync(join(tariffDir(), `${n}.yaml`), 'utf8'), n).tariff?.currency);
    expect(new Set(currencies)).toEqual(new Set(['NOK', 'SEK', 'DKK']));
    expect(names.length).toBeGreaterThanOrEqual(5);
  });

  it.each(names)('%s parses, is named after its file and says where its figures come from and when', (name) => {
    const { tariff, problems: found } = parseTariff(readFileSync(join(tariffDir(), `${name}.yaml`), 'utf8'), name);
    expect(found).toEqual([]);
    expect(tariff?.name).toBe(name);
    expect(tariff?.source?.url).toMatch(/^https:\/\//);
    expect(tariff?.source?.validFrom).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(tariff?.source?.checked).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(tariff?.source?.notes?.length ?? 0).toBeGreaterThan(40);
  });
});

describe('site.tariff', () => {
  it('loads a shipped tariff by name', () => {
    const { config } = parseConfig(doc({ tariff: 'elvia' }));
    const t = siteTariff(config);
    expect(t?.name).toBe('elvia');
    expect(t?.capacity?.measure).toBe('dailyPeaks');
  });

  it('keeps the flat keys when no tariff is given', () => {
    const { config } = parseConfig(doc({ gridFeePerKwh: 0.3, taxPerKwh: 0.1 }));
    expect(siteTariff(config)).toBeNull();
    expect(config.site).toMatchObject({ gridFeePerKwh: 0.3, taxPerKwh: 0.1, vatPct: 25 });
  });

  it('warns that the flat fee keys are ignored beside a tariff', () => {
    const { warnings } = parseConfig(doc({ tariff: 'lede', gridFeePerKwh: 0.3 }));
    expect(warnings).toContain('site.gridFeePerKwh: ignored, the tariff "lede" sets grid fees and tax');
  });

  it('refuses an unknown name and lists the shipped ones', () => {
    const [p] = problems(() => parseConfig(doc({ tariff: 'no-such-grid' })));
    expect(p?.path).toBe('site.tariff');
    expect(p?.message).toContain('unknown tariff "no-such-grid"');
    expect(p?.message).toContain('elvia');
  });

  it('reads a tariff file relative to the config file and reports its problems with key paths and the line', () => {
    const dir = tempDir('wattshift-tariff-');
    writeFileSync(
      join(dir, 'my-grid.yaml'),
      [
        'name: my-grid',
        'currency: NOK',
        'capacity:',
        '  measure: dailyPeaks',
        '  steps:',
        '    - { upToKw: 5, perMonth: 100 }',
        '    - { upToKw: 2, perMonth: 200 }',
        'surprise: 1',
      ].join('\n'),
    );
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      [
        'version: 1',
        'site:',
        '  timezone: Europe/Oslo',
        '  priceArea: NO1',
        '  currency: NOK',
        '  locationLimitKw: 11',
        '  tariff: ./my-grid.yaml',
        'spark:',
        '  clientId: c',
        '  clientSecret: s',
        'storage:',
        '  path: ":memory:"',
      ].join('\n'),
    );
    const found = problems(() => loadConfig(file, {}));
    expect(found.map((p) => p.message)).toEqual([
      `${join(dir, 'my-grid.yaml')}: capacity.steps[1].upToKw: steps must rise: each upToKw above the previous one, null only last`,
      `${join(dir, 'my-grid.yaml')}: surprise: unknown key`,
    ]);
    expect(found.every((p) => p.path === 'site.tariff' && p.line === 7)).toBe(true);

    writeFileSync(join(dir, 'my-grid.yaml'), 'name: my-grid\ncurrency: NOK\ngridEnergy: { perKwh: 0.2 }\n');
    expect(siteTariff(loadConfig(file, {}).config)?.gridEnergy.perKwh).toBe(0.2);
  });

  it('takes an inline tariff, with problems at their own key path', () => {
    const inline = { name: 'inline', currency: 'NOK', energy: { basis: 'fixed', pricePerKwh: 0.4 } };
    expect(siteTariff(parseConfig(doc({ tariff: inline })).config)?.energy).toEqual({ basis: 'fixed', pricePerKwh: 0.4 });
    const found = problems(() => parseConfig(doc({ tariff: { ...inline, capacity: { measure: 'dailyPeaks' } } })));
    expect(found.map((p) => p.message)).toContain('give one of steps, perKwPerMonth or seasons');
  });

  it('takes per-kW prices by season when every month is in exactly one season', () => {
    const winter = { months: [11, 12, 1, 2, 3], perKwPerMonth: 81.25 };
    const summer = { months: [4, 5, 6, 7, 8, 9, 10], perKwPerMonth: 40.63 };
    const tariff = (seasons: unknown[], extra = {}) => ({
      name: 'seasonal',
      currency: 'NOK',
      capacity: { measure: 'hourlyPeaks', count: 2, seasons, ...extra },
    });
    expect(siteTariff(parseConfig(doc({ tariff: tariff([winter, summer]) })).config)?.capacity?.seasons).toEqual([winter, summer]);
    const gap = problems(() => parseConfig(doc({ tariff: tariff([winter, { ...summer, months: [4, 5, 6] }]) })));
    expect(gap).toContainEqual(
      expect.objectContaining({ path: 'site.tariff.capacity.seasons', message: 'seasons must name every month 1–12 exactly once' }),
    );
    const twice = problems(() => parseConfig(doc({ tariff: tariff([winter, { ...summer, months: [...summer.months, 3] }]) })));
    expect(twice.map((p) => p.message)).toContain('seasons must name every month 1–12 exactly once');
    const both = problems(() => parseConfig(doc({ tariff: tariff([winter, summer], { perKwPerMonth: 50 }) })));
    expect(both.map((p) => p.message)).toContain('give one of steps, perKwPerMonth or seasons');
  });

  it('refuses a tariff in another currency than the site', () => {
    const [p] = problems(() => parseConfig(doc({ tariff: 'n1' })));
    expect(p).toMatchObject({ path: 'site.tariff', message: 'the tariff is in DKK but site.currency is NOK' });
  });
});

describe('docs/tariffs.md', () => {
  it('has an example that is a valid site with a tariff', () => {
    const block = /```yaml\n([\s\S]*?)```/.exec(readFileSync('docs/tariffs.md', 'utf8'))?.[1] ?? '';
    const example = parse(block) as { site: Record<string, unknown> };
    const { config, warnings } = parseConfig(doc(example.site));
    expect(warnings.filter((w) => w.startsWith('site.'))).toEqual([]);
    expect(siteTariff(config)?.capacity?.steps).toHaveLength(4);
  });
});
