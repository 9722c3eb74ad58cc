/** Checks that span several fields of the config (run once the fields themselves are valid). */
import type { z } from 'zod';
import type { DeviceConfig, ModbusBusConfig, SourceConfig } from './schema-devices.js';

interface CrossCheckInput {
  site: { currency: string; exchangeRates?: Partial<Record<string, number>> | undefined };
  mqtt?: unknown;
  modbus: Record<string, ModbusBusConfig>;
  devices: DeviceConfig[];
  reports: { retryMinS: number; retryMaxS: number };
  planner: { evFallbackWindow: { start: string; end: string } };
}

type Ctx = z.core.$RefinementCtx;

function issue(ctx: Ctx, path: (string | number)[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}

function checkSource(cfg: CrossCheckInput, ctx: Ctx, source: SourceConfig | undefined, path: (string | number)[]): void {
  if (!source) return;
  if (source.type === 'modbus' && !(source.bus in cfg.modbus)) {
    const known = Object.keys(cfg.modbus);
    issue(ctx, [...path, 'bus'], `unknown Modbus bus "${source.bus}" (${known.length ? `known: ${known.join(', ')}` : 'the modbus section is empty'})`);
  }
  if (source.type !== 'modbus' && cfg.mqtt === undefined) {
    issue(ctx, [...path, 'type'], `a "${source.type}" source needs the mqtt section`);
  }
}

/** The planner and the control loop drive one tank and one charger; a second would silently follow the first's plan. */
const plannedKinds = { hotWaterTank: 'tank', evCharger: 'charger' } as const;

export function crossCheck(cfg: CrossCheckInput, ctx: Ctx): void {
  const seen = new Map<string, number>();
  const firstOfKind = new Map<string, number>();
  let mainMeters = 0;
  cfg.devices.forEach((d, i) => {
    const at = ['devices', i];
    const first = seen.get(d.id);
    if (first !== undefined) issue(ctx, [...at, 'id'], `duplicate device id "${d.id}" (also devices[${first}])`);
    else seen.set(d.id, i);
    if (d.kind in plannedKinds) {
      const firstSame = firstOfKind.get(d.kind);
      if (firstSame !== undefined) {
        const noun = plannedKinds[d.kind as keyof typeof plannedKinds];
        issue(ctx, [...at, 'kind'], `only one ${d.kind} can be planned (devices[${firstSame}] is one); a second ${noun} would follow the first ${noun}'s plan, so it is refused`);
      } else firstOfKind.set(d.kind, i);
    }
    checkSource(cfg, ctx, d.meter, [...at, 'meter']);
    if (d.kind === 'hotWaterTank') {
      checkSource(cfg, ctx, d.switch, [...at, 'switch']);
      checkSource(cfg, ctx, d.thermometer, [...at, 'thermometer']);
      if (!d.switch) issue(ctx, [...at, 'switch'], 'a hotWaterTank needs a switch source');
      if (d.meter?.type === 'goe') issue(ctx, [...at, 'meter', 'type'], 'a go-e source meters a charger, not a tank');
      const m = d.model;
      if (m.floorC >= m.maxC) issue(ctx, [...at, 'model', 'floorC'], `floorC (${m.floorC}) must be below maxC (${m.maxC})`);
      if (m.coldWaterC >= m.floorC) issue(ctx, [...at, 'model', 'coldWaterC'], `coldWaterC (${m.coldWaterC}) must be below floorC (${m.floorC})`);
      if (m.legionella.enabled && m.legionella.tempC > m.maxC) {
        issue(ctx, [...at, 'model', 'legionella', 'tempC'], `legionella tempC (${m.legionella.tempC}) is above maxC (${m.maxC})`);
      }
      if (m.initialC !== undefined && m.initialC > m.maxC) issue(ctx, [...at, 'model', 'initialC'], `initialC (${m.initialC}) is above maxC (${m.maxC})`);
    } else if (d.kind === 'evCharger') {
      checkSource(cfg, ctx, d.charger, [...at, 'charger']);
      if (!d.charger) issue(ctx, [...at, 'charger'], 'an evCharger needs a charger source');
      const m = d.model;
      if (m.minCurrentA > m.maxCurrentA) issue(ctx, [...at, 'model', 'minCurrentA'], `minCurrentA (${m.minCurrentA}) is above maxCurrentA (${m.maxCurrentA})`);
      if (d.safeCurrentA > m.maxCurrentA) issue(ctx, [...at, 'safeCurrentA'], `safeCurrentA (${d.safeCurrentA}) is above maxCurrentA (${m.maxCurrentA})`);
      if (d.safeCurrentA > 0 && d.safeCurrentA < m.minCurrentA) {
        issue(ctx, [...at, 'safeCurrentA'], `safeCurrentA (${d.safeCurrentA}) must be 0 (pause) or at least minCurrentA (${m.minCurrentA})`);
      }
    } else {
      if (!d.meter) issue(ctx, [...at, 'meter'], 'a meter device needs a meter source');
      if (d.model.main) mainMeters += 1;
      if (d.model.main && mainMeters > 1) issue(ctx, [...at, 'model', 'main'], 'only one device can be the main meter');
    }
  });
  for (const code of Object.keys(cfg.site.exchangeRates ?? {})) {
    if (code === cfg.site.currency) issue(ctx, ['site', 'exchangeRates', code], `the site currency ${code} needs no exchange rate`);
  }
  if (cfg.reports.retryMinS > cfg.reports.retryMaxS) issue(ctx, ['reports', 'retryMinS'], 'retryMinS is above retryMaxS');
  const w = cfg.planner.evFallbackWindow;
  if (w.start === w.end) issue(ctx, ['planner', 'evFallbackWindow', 'end'], 'the fallback window is empty (start = end)');
}
