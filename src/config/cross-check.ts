/** Checks that span several fields of the config (run once the fields themselves are valid). */
import type { z } from 'zod';
import { checkUpstream, type UpstreamCheckInput } from './schema-upstream.js';
import { checkTopicsAndOutputs } from './topic-check.js';
import { checkPhaseSwitching } from './schema-phases.js';
import type { DeviceConfig, ModbusBusConfig, OcppSource, SourceConfig, TankModel } from './schema-devices.js';
import { checkHeatPump } from './schema-heat-pump.js';
import { checkZone } from './schema-zone.js';
import { checkSolar } from './schema-solar.js';
import type { VehicleConfig } from './schema-vehicles.js';
import { checkVehicles } from './vehicle-check.js';
import { didYouMean } from './suggest.js';

/**
 * The sections the rules read. A section left undefined failed its own validation: the rules that
 * need it are skipped, the others still run, so one pass reports every problem.
 */
export interface CrossCheckInput extends UpstreamCheckInput {
  site?: { currency: string; exchangeRates?: Partial<Record<string, number>> | undefined; fuse?: { meter: string } | undefined } | undefined;
  mqtt?: unknown;
  ocpp?: unknown;
  modbus?: Record<string, ModbusBusConfig> | undefined;
  /** Each device as parsed, or undefined where it is invalid (indices are kept). */
  devices: readonly (DeviceConfig | undefined)[];
  /** Each vehicle as parsed, or undefined where it is invalid. */
  vehicles?: readonly (VehicleConfig | undefined)[] | undefined;
  reports?: { retryMinS: number; retryMaxS: number } | undefined;
  planner?: { evFallbackWindow: { start: string; end: string } } | undefined;
}

export type ReportIssue = (path: (string | number)[], message: string) => void;

function checkSource(cfg: CrossCheckInput, issue: ReportIssue, source: SourceConfig | OcppSource | undefined, path: (string | number)[]): void {
  if (!source) return;
  if (source.type === 'modbus' && cfg.modbus && !(source.bus in cfg.modbus)) {
    const known = Object.keys(cfg.modbus);
    issue([...path, 'bus'], `unknown Modbus bus "${source.bus}" (${known.length ? `known: ${known.join(', ')}` : 'the modbus section is empty'})`);
  }
  if (source.type === 'ocpp') {
    if (cfg.ocpp === undefined) issue([...path, 'type'], 'an "ocpp" source needs the ocpp section (the central system)');
    // OCPP 1.6 Security Whitepaper: the basic-auth password (AuthorizationKey) is 16 to 40 characters.
    if (source.password.length < 16 || source.password.length > 40)
      issue([...path, 'password'], 'the charge point password must be 16 to 40 characters');
  } else if (source.type !== 'modbus' && cfg.mqtt === undefined) {
    issue([...path, 'type'], `a "${source.type}" source needs the mqtt section`);
  }
}

/** "unknown device", with the ids there are and the nearest of them. */
export function unknownDevice(id: string, known: readonly string[]): string {
  return `unknown device "${id}"${didYouMean(id, known)} (devices in the config: ${known.length > 0 ? known.join(', ') : 'none'})`;
}

/** The fuse needs per-phase currents: only a HAN meter (amsreader source) gives them. */
function checkFuseMeter(cfg: CrossCheckInput, issue: ReportIssue): void {
  const id = cfg.site?.fuse?.meter;
  if (id === undefined) return;
  const d = cfg.devices.find((x) => x?.id === id);
  // An invalid device may be the one meant: only a complete device list can tell "unknown".
  if (d === undefined) {
    if (cfg.devices.every((x) => x !== undefined))
      issue(
        ['site', 'fuse', 'meter'],
        unknownDevice(
          id,
          cfg.devices.flatMap((x) => (x ? [x.id] : [])),
        ),
      );
  } else if (d.kind !== 'meter' || d.meter?.type !== 'amsreader')
    issue(['site', 'fuse', 'meter'], `"${id}" gives no per-phase currents: it must be a meter device with an amsreader source`);
}

/** The cross-field rules as a zod refinement of the whole config. */
export function crossCheck(cfg: CrossCheckInput, ctx: z.core.$RefinementCtx): void {
  crossCheckWith(cfg, (path, message) => ctx.addIssue({ code: 'custom', path, message }));
}

/** The tank model's own consistency (a hot water tank's or the one a heat pump heats). */
function checkTankModel(m: Omit<TankModel, 'elementKw' | 'relayOnly'>, at: (string | number)[], issue: ReportIssue): void {
  if (m.floorC >= m.maxC) issue([...at, 'floorC'], `floorC (${m.floorC}) must be below maxC (${m.maxC})`);
  if (m.coldWaterC >= m.floorC) issue([...at, 'coldWaterC'], `coldWaterC (${m.coldWaterC}) must be below floorC (${m.floorC})`);
  if (m.legionella.enabled && m.legionella.tempC > m.maxC) {
    issue([...at, 'legionella', 'tempC'], `legionella tempC (${m.legionella.tempC}) is above maxC (${m.maxC})`);
  }
  if (m.initialC !== undefined && m.initialC > m.maxC) issue([...at, 'initialC'], `initialC (${m.initialC}) is above maxC (${m.maxC})`);
  m.comfort.forEach((w, j) => {
    if (w.tempC > m.maxC)
      issue([...at, 'comfort', j, 'tempC'], `comfort tempC (${w.tempC}) is above maxC (${m.maxC}): the thermostat never gets there`);
  });
}

export function crossCheckWith(cfg: CrossCheckInput, issue: ReportIssue): void {
  const seen = new Map<string, number>();

  let mainMeters = 0;
  cfg.devices.forEach((d, i) => {
    if (!d) return;
    const at = ['devices', i];
    const first = seen.get(d.id);
    if (first !== undefined) issue([...at, 'id'], `duplicate device id "${d.id}" (also devices[${first}])`);
    else seen.set(d.id, i);
    if (d.kind === 'solar') return checkSolar(d, at, issue, cfg);
    checkSource(cfg, issue, d.meter, [...at, 'meter']);
    if (d.kind === 'hotWaterTank') {
      checkSource(cfg, issue, d.switch, [...at, 'switch']);
      checkSource(cfg, issue, d.thermometer, [...at, 'thermometer']);
      if (!d.switch) issue([...at, 'switch'], 'a hotWaterTank needs a switch source');
      if (d.meter?.type === 'goe' || d.meter?.type === 'ocpp')
        issue([...at, 'meter', 'type'], `a ${d.meter.type} source meters a charger, not a tank`);
      checkTankModel(d.model, [...at, 'model'], issue);
    } else if (d.kind === 'heatPump') {
      checkHeatPump(d, at, issue, (source, path) => checkSource(cfg, issue, source, path));
      checkTankModel(d.model, [...at, 'model'], issue);
    } else if (d.kind === 'zone') {
      checkZone(d, at, issue, (source, path) => checkSource(cfg, issue, source, path));
      if (d.thermostat && cfg.mqtt === undefined) issue([...at, 'thermostat'], 'a thermostat needs the mqtt section');
    } else if (d.kind === 'evCharger') {
      checkSource(cfg, issue, d.charger, [...at, 'charger']);
      if (!d.charger) issue([...at, 'charger'], 'an evCharger needs a charger source');
      if (d.soc && cfg.mqtt === undefined) issue([...at, 'soc'], 'a SoC topic needs the mqtt section');
      const m = d.model;
      if (m.minCurrentA > m.maxCurrentA)
        issue([...at, 'model', 'minCurrentA'], `minCurrentA (${m.minCurrentA}) is above maxCurrentA (${m.maxCurrentA})`);
      if (d.safeCurrentA > m.maxCurrentA) issue([...at, 'safeCurrentA'], `safeCurrentA (${d.safeCurrentA}) is above maxCurrentA (${m.maxCurrentA})`);
      if (d.safeCurrentA > 0 && d.safeCurrentA < m.minCurrentA) {
        issue([...at, 'safeCurrentA'], `safeCurrentA (${d.safeCurrentA}) must be 0 (pause) or at least minCurrentA (${m.minCurrentA})`);
      }
      checkPhaseSwitching(d, at, issue);
    } else {
      if (!d.meter) issue([...at, 'meter'], 'a meter device needs a meter source');
      if (d.meter?.type === 'ocpp') issue([...at, 'meter', 'type'], "an ocpp source meters a charger's connector: use it on the evCharger");
      if (d.model.main) mainMeters += 1;
      if (d.model.main && mainMeters > 1) issue([...at, 'model', 'main'], 'only one device can be the main meter');
    }
  });
  for (const code of Object.keys(cfg.site?.exchangeRates ?? {})) {
    if (code === cfg.site?.currency) issue(['site', 'exchangeRates', code], `the site currency ${code} needs no exchange rate`);
  }
  checkFuseMeter(cfg, issue);
  checkVehicles(cfg, issue);
  checkTopicsAndOutputs(cfg.mqtt, cfg.devices, issue);
  checkUpstream(cfg, issue);
  if (cfg.reports && cfg.reports.retryMinS > cfg.reports.retryMaxS) issue(['reports', 'retryMinS'], 'retryMinS is above retryMaxS');
  const w = cfg.planner?.evFallbackWindow;
  if (w && w.start === w.end) issue(['planner', 'evFallbackWindow', 'end'], 'the fallback window is empty (start = end)');
}
