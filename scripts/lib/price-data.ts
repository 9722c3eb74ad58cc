/**
 * Loader for the real price extracts in `data/prices/` (sources and licences in its README).
 * Every series is normalised to EUR/kWh excluding VAT, hourly, keyed by UTC hour start. For
 * tests and benchmarks only.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PriceSeries {
  /** `file:area`, e.g. `dk2_2024-10-07_2024-11-06_eds.csv:DK2`. */
  id: string;
  file: string;
  area: string;
  /** Hourly points, sorted, EUR/kWh excluding VAT. */
  points: { startMs: number; price: number }[];
}

/** NOK per EUR used to convert the Norwegian extract (August 2024 level). */
export const NOK_PER_EUR = 11.7;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const priceDataDir = join(repoRoot, 'data', 'prices');

function parseMs(iso: string): number {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) throw new Error(`bad timestamp ${iso}`);
  return ms;
}

function loadCsv(file: string, text: string): PriceSeries[] {
  const lines = text.trim().split(/\r?\n/);
  const header = (lines[0] ?? '').split(',');
  const col = (name: string): number => header.indexOf(name);
  const iStart = col('start_utc');
  const iArea = col('area');
  let iPrice: number;
  let factor: number;
  if (col('eur_per_mwh') >= 0) {
    iPrice = col('eur_per_mwh');
    factor = 1 / 1000;
  } else if (col('nok_per_kwh_excl_vat') >= 0) {
    iPrice = col('nok_per_kwh_excl_vat');
    factor = 1 / NOK_PER_EUR;
  } else if (col('c_per_kwh_incl_vat') >= 0) {
    iPrice = col('c_per_kwh_incl_vat');
    factor = 1 / 100 / 1.24;
  } else throw new Error(`${file}: unknown price column`);
  const byArea = new Map<string, { startMs: number; price: number }[]>();
  for (const line of lines.slice(1)) {
    const f = line.split(',');
    const area = f[iArea] ?? '';
    const price = Number(f[iPrice]);
    if (!Number.isFinite(price)) continue;
    const list = byArea.get(area) ?? [];
    list.push({ startMs: parseMs(f[iStart] ?? ''), price: price * factor });
    byArea.set(area, list);
  }
  return [...byArea.entries()].map(([area, points]) => ({
    id: `${file}:${area}`,
    file,
    area,
    points: points.sort((a, b) => a.startMs - b.startMs),
  }));
}

/** All hourly CSV series (every area of every file), sorted by id. */
export function loadPriceSeries(): PriceSeries[] {
  const out: PriceSeries[] = [];
  for (const file of readdirSync(priceDataDir)
    .filter((f) => f.endsWith('.csv'))
    .sort()) {
    out.push(...loadCsv(file, readFileSync(join(priceDataDir, file), 'utf8')));
  }
  return out;
}

/** The Nord Pool data-portal JSON bodies (one delivery day), per area, EUR/kWh. */
export function loadNordpoolJson(file: string): PriceSeries[] {
  const body = JSON.parse(readFileSync(join(priceDataDir, file), 'utf8')) as {
    multiIndexEntries: { deliveryStart: string; entryPerArea: Record<string, number> }[];
  };
  const byArea = new Map<string, { startMs: number; price: number }[]>();
  for (const e of body.multiIndexEntries) {
    for (const [area, v] of Object.entries(e.entryPerArea)) {
      const list = byArea.get(area) ?? [];
      list.push({ startMs: parseMs(e.deliveryStart), price: v / 1000 });
      byArea.set(area, list);
    }
  }
  return [...byArea.entries()].map(([area, points]) => ({ id: `${file}:${area}`, file, area, points }));
}

/** Contiguous hourly windows of `hours` starting every `strideHours`. */
export function hourlyWindows(
  series: PriceSeries,
  hours: number,
  strideHours: number,
): { startMs: number; points: { startMs: number; price: number }[] }[] {
  const out: { startMs: number; points: { startMs: number; price: number }[] }[] = [];
  const pts = series.points;
  for (let i = 0; i + hours <= pts.length; i += strideHours) {
    const w = pts.slice(i, i + hours);
    const first = w[0];
    const lastP = w[w.length - 1];
    if (!first || !lastP || lastP.startMs - first.startMs !== (hours - 1) * 3_600_000) continue;
    out.push({ startMs: first.startMs, points: w });
  }
  return out;
}

/** Local timezone of a price area. */
export function areaTimezone(area: string): string {
  if (area.startsWith('NO')) return 'Europe/Oslo';
  if (area.startsWith('SE')) return 'Europe/Stockholm';
  if (area.startsWith('DK')) return 'Europe/Copenhagen';
  if (area === 'FI') return 'Europe/Helsinki';
  return 'Europe/Oslo';
}
