/**
 * Resolves `site.tariff`: a shipped tariff by name (`elvia`, from the package's `tariffs/`), a
 * tariff file by path (relative to the config file), or an inline tariff. The loaded tariff
 * replaces the reference, so the rest of wattshift only ever sees a parsed {@link Tariff}.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { WattshiftError } from '../errors.js';
import { packageRoot } from '../package-root.js';
import { tariffSchema, type Tariff } from './schema-tariff.js';
import type { Config } from './schema.js';
import { formatPath } from './secret.js';
import { didYouMean } from './suggest.js';

export interface TariffProblem {
  path: string;
  message: string;
}

const builtinName = /^[a-z0-9][a-z0-9-]*$/;

export function tariffDir(): string {
  return join(packageRoot(), 'tariffs');
}

/** Names of the shipped tariffs. */
export function builtinTariffNames(): string[] {
  const dir = tariffDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/** Parses a tariff file's text; problems carry the key path inside the file. */
export function parseTariff(text: string, source: string): { tariff: Tariff | null; problems: TariffProblem[] } {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    return { tariff: null, problems: [{ path: '', message: `${source}: not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}` }] };
  }
  const parsed = tariffSchema.safeParse(data);
  if (parsed.success) return { tariff: parsed.data, problems: [] };
  return {
    tariff: null,
    problems: parsed.error.issues.map((i) => {
      const segs = i.path.filter((s): s is string | number => typeof s !== 'symbol');
      const keys = i.code === 'unrecognized_keys' ? i.keys.map((k) => formatPath([...segs, k])).join(', ') : formatPath(segs);
      return { path: keys, message: `${source}: ${keys === '' ? '' : `${keys}: `}${i.code === 'unrecognized_keys' ? 'unknown key' : i.message}` };
    }),
  };
}

function loadReference(ref: string, baseDir: string): { tariff: Tariff | null; problems: TariffProblem[] } {
  const builtin = builtinName.test(ref);
  const file = builtin ? join(tariffDir(), `${ref}.yaml`) : isAbsolute(ref) ? ref : resolve(baseDir, ref);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    const known = builtinTariffNames();
    const message = builtin
      ? `unknown tariff "${ref}"${didYouMean(ref, known)}; shipped tariffs: ${known.join(', ') || 'none'} (or give a path to a tariff file)`
      : `cannot read tariff file ${file}`;
    return { tariff: null, problems: [{ path: '', message }] };
  }
  const out = parseTariff(text, file);
  if (out.tariff && builtin && out.tariff.name !== ref) {
    return { tariff: null, problems: [{ path: '', message: `${file}: name "${out.tariff.name}" does not match the file name` }] };
  }
  return out;
}

/** Replaces a tariff reference by the parsed tariff and checks it against the site. */
type TariffSite = Pick<Config['site'], 'tariff' | 'currency' | 'gridFeePerKwh' | 'taxPerKwh'>;

export function resolveTariff<C extends { site: TariffSite }>(
  config: C,
  baseDir: string,
): { config: C; problems: TariffProblem[]; warnings: string[] } {
  const ref = config.site.tariff;
  if (ref === undefined) return { config, problems: [], warnings: [] };
  const loaded = typeof ref === 'string' ? loadReference(ref, baseDir) : { tariff: ref, problems: [] };
  const at = (p: TariffProblem): TariffProblem => ({
    path: typeof ref === 'string' || p.path === '' ? 'site.tariff' : `site.tariff.${p.path}`,
    message: p.message,
  });
  if (!loaded.tariff) return { config, problems: loaded.problems.map(at), warnings: [] };
  const tariff = loaded.tariff;
  if (tariff.currency !== config.site.currency) {
    return {
      config,
      problems: [at({ path: 'currency', message: `the tariff is in ${tariff.currency} but site.currency is ${config.site.currency}` })],
      warnings: [],
    };
  }
  const warnings: string[] = [];
  for (const key of ['gridFeePerKwh', 'taxPerKwh'] as const) {
    if (config.site[key] !== 0) warnings.push(`site.${key}: ignored, the tariff "${tariff.name}" sets grid fees and tax`);
  }
  return { config: { ...config, site: { ...config.site, tariff } }, problems: [], warnings };
}

/** The site's tariff once the config is loaded (null: the flat keys price every slot). */
export function siteTariff(config: Pick<Config, 'site'>): Tariff | null {
  const t = config.site.tariff;
  if (t === undefined) return null;
  if (typeof t === 'string')
    throw new WattshiftError('INTERNAL', `site.tariff "${t}" was not resolved; load the config with loadConfig or parseConfig`);
  return t;
}
