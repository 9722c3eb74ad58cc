/**
 * Loads the YAML config: reads the file, resolves secrets, validates with the schema and
 * reports every problem at once, each with its key path (and line, when it comes from a file).
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument, isMap, isSeq, isPair, isScalar, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { WattshiftError } from '../errors.js';
import {
  configSchema,
  deviceSchema,
  eventsSchema,
  plannerSchema,
  reportsSchema,
  siteSchema,
  sparkSchema,
  storageSchema,
  vehicleSchema,
  type Config,
  type ConfigInput,
  type DeviceConfig,
  type StorageConfig,
  type VehicleConfig,
} from './schema.js';
import { crossCheckWith } from './cross-check.js';
import { upstreamSchema } from './schema-upstream.js';
import { boundMessage } from './units.js';
import { formatPath, resolveSecrets } from './secret.js';
import { resolveTariff } from './tariff-file.js';
import { closest, didYouMean } from './suggest.js';
import { keysAt } from './walk.js';

export interface ConfigProblem {
  /** Key path such as `devices[0].model.volumeL` (empty for the whole file). */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export interface LoadedConfig {
  /** The parsed config, deep-frozen. */
  config: Config;
  /** Every resolved secret value, for the logger to mask. */
  secrets: string[];
  warnings: string[];
}

export interface ParseOptions {
  env?: NodeJS.ProcessEnv;
  /** Relative secret `file` paths resolve against this directory (default: the working directory). */
  baseDir?: string;
  /**
   * For `check` outside systemd: a `{ credential }` reference without `$CREDENTIALS_DIRECTORY`
   * becomes a warning instead of an error (the returned config then holds a placeholder).
   */
  deferCredentials?: boolean;
  /**
   * Checks against the machine (database directory, device profiles, TLS files), run on the
   * parts of the config that are valid even when others are not, so one pass reports everything.
   */
  machineChecks?: MachineChecks;
}

/** The sections machine checks read, paths resolved; a section that failed validation is undefined. */
export interface CheckableConfig {
  devices: readonly (DeviceConfig | undefined)[];
  storage: StorageConfig | undefined;
  mqtt: Config['mqtt'];
  modbus: Config['modbus'] | undefined;
  ocpp: Config['ocpp'];
  upstream: Config['upstream'] | undefined;
}
export type MachineChecks = (config: CheckableConfig) => ConfigProblem[];

interface Located {
  file?: string;
  locate?: (path: readonly (string | number)[], keyOnly: boolean) => { line: number; column: number } | undefined;
}

/** Reads, resolves and validates a YAML config file. Throws WattshiftError CONFIG_INVALID or CONFIG_SECRET_UNREADABLE. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env, options: Omit<ParseOptions, 'env' | 'baseDir'> = {}): LoadedConfig {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : String(err);
    throw invalid(file, [{ path: '', message: `cannot read config file ${file}: ${why}` }], `cannot read config file ${file}: ${why}`);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e): ConfigProblem => {
      const pos = e.linePos?.[0];
      const first = e.message.split('\n')[0] ?? e.message;
      return {
        path: '',
        message: `YAML syntax error: ${first.replace(/ at line \d+, column \d+:?$/, '')}`,
        ...(pos ? { line: pos.line, column: pos.col } : {}),
      };
    });
    throw invalid(file, problems);
  }
  let document: unknown;
  try {
    document = doc.toJS();
  } catch (err) {
    // An alias without its anchor, or an alias bomb, only shows when the document is resolved.
    throw invalid(file, [{ path: '', message: `YAML error: ${err instanceof Error ? err.message : String(err)}` }]);
  }
  if (document === null || document === undefined) throw invalid(file, [{ path: '', message: 'the config file is empty' }]);
  return parseWith(document, { ...options, env, baseDir: dirname(file) }, { file, locate: locator(doc, lineCounter) });
}

/** Validates a config object (e.g. one built in code by the demo) against the same schema. */
export function parseConfig(document: unknown, options: ParseOptions = {}): LoadedConfig {
  return parseWith(document, options, {});
}

const minimalDocument = {
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
  spark: { clientId: 'wattshift', clientSecret: 'not-a-real-secret' },
  storage: { path: ':memory:' },
} satisfies ConfigInput;

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/**
 * A valid config built in code: the schema's defaults plus a minimal site and an in-memory
 * database, with `overrides` merged in (objects merged, arrays replaced). For the demo and tests.
 */
export function defaultConfig(overrides: DeepPartial<ConfigInput> = {}): Config {
  return parseConfig(merge(minimalDocument, overrides)).config;
}

function merge(base: unknown, over: unknown): unknown {
  if (isObject(base) && isObject(over)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(over)) if (v !== undefined) out[k] = merge(base[k], v);
    return out;
  }
  return over === undefined ? base : over;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseWith(document: unknown, options: ParseOptions, where: Located): LoadedConfig {
  const resolved = resolveSecrets(configSchema, document, {
    env: options.env ?? process.env,
    baseDir: options.baseDir ?? process.cwd(),
    ...(options.deferCredentials ? { deferCredentials: true } : {}),
  });
  const secretProblems = resolved.problems.map((p) => withLocation({ path: p.path, message: p.message }, pathSegments(p.path), where, false));
  const result = configSchema.safeParse(resolved.document);
  const parsed = result.success ? resolvePaths(result.data, options) : undefined;
  const schemaProblems = result.success
    ? []
    : dedupe([...issuesToProblems(result.error.issues, where), ...salvagedCrossChecks(resolved.document, where)]);
  const machineProblems = (options.machineChecks?.(parsed ? checkable(parsed) : salvage(resolved.document, options)) ?? []).map((p) =>
    withLocation(p, pathSegments(p.path), where, false),
  );
  const tariff = parsed ? resolveTariff(parsed, options.baseDir ?? process.cwd()) : undefined;
  // With the rest invalid, a tariff that is valid as written is still looked up and checked.
  const rawSite = recordOf(recordOf(resolved.document).site);
  const tariffRef = parsed ? undefined : sectionOf(siteSchema.shape.tariff, rawSite.tariff);
  const currency = sectionOf(siteSchema.shape.currency, rawSite.currency);
  const salvagedTariff =
    tariffRef === undefined || currency === undefined
      ? undefined
      : resolveTariff({ site: { tariff: tariffRef, currency, gridFeePerKwh: 0, taxPerKwh: 0 } }, options.baseDir ?? process.cwd());
  const tariffProblems = (tariff ?? salvagedTariff)?.problems.map((p) => withLocation(p, pathSegments(p.path), where, false)) ?? [];
  const problems = [...secretProblems, ...schemaProblems, ...machineProblems, ...tariffProblems];
  if (problems.length > 0 || !parsed || !tariff) {
    const onlyUnreadable =
      schemaProblems.length === 0 && machineProblems.length === 0 && tariffProblems.length === 0 && resolved.problems.every((p) => p.unreadable);
    if (onlyUnreadable) {
      throw new WattshiftError(
        'CONFIG_SECRET_UNREADABLE',
        `${where.file ? `${where.file}: ` : ''}${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
        {
          details: { ...(where.file ? { file: where.file } : {}), problems },
        },
      );
    }
    throw invalid(where.file, problems);
  }
  const config = tariff.config;
  return {
    config: deepFreeze(config),
    secrets: [...new Set(resolved.secrets)],
    warnings: [...resolved.warnings, ...tariff.warnings, ...configWarnings(config)],
  };
}

const sectionOf = <T>(schema: z.ZodType<T>, value: unknown): T | undefined => {
  const r = schema.safeParse(value);
  return r.success ? r.data : undefined;
};

function recordOf(document: unknown): Record<string, unknown> {
  return isObject(document) ? document : {};
}

/** The sections of an invalid document that are valid on their own. */
function sections(
  document: unknown,
): Pick<CheckableConfig, 'devices' | 'storage' | 'modbus'> & { raw: Record<string, unknown>; vehicles: (VehicleConfig | undefined)[] } {
  const raw = recordOf(document);
  return {
    raw,
    devices: Array.isArray(raw.devices) ? raw.devices.map((d) => sectionOf(deviceSchema, d)) : [],
    vehicles: Array.isArray(raw.vehicles) ? raw.vehicles.map((v) => sectionOf(vehicleSchema, v)) : [],
    storage: sectionOf(storageSchema, raw.storage ?? {}),
    modbus: sectionOf(configSchema.shape.modbus, raw.modbus ?? {}),
  };
}

/**
 * Zod skips the whole-config rules once any field is invalid; they run here on the sections that
 * are valid, so a user fixes every problem in one round.
 */
function salvagedCrossChecks(document: unknown, where: Located): ConfigProblem[] {
  const s = sections(document);
  const out: ConfigProblem[] = [];
  crossCheckWith(
    {
      site: sectionOf(siteSchema, s.raw.site),
      mqtt: s.raw.mqtt,
      ocpp: s.raw.ocpp,
      modbus: s.modbus,
      devices: s.devices,
      vehicles: s.vehicles,
      reports: sectionOf(reportsSchema, s.raw.reports ?? {}),
      planner: sectionOf(plannerSchema, s.raw.planner ?? {}),
      upstream: sectionOf(upstreamSchema, s.raw.upstream ?? { mode: 'direct' }),
      spark: sectionOf(sparkSchema, s.raw.spark ?? {}),
      events: sectionOf(eventsSchema, s.raw.events ?? {}),
    },
    (path, message) => out.push(withLocation({ path: formatPath(path), message }, path, where, false)),
  );
  return out;
}

function salvage(document: unknown, options: ParseOptions): CheckableConfig {
  const s = sections(document);
  const baseDir = options.baseDir ?? process.cwd();
  const mqtt = sectionOf(configSchema.shape.mqtt, s.raw.mqtt);
  const ocpp = sectionOf(configSchema.shape.ocpp, s.raw.ocpp);
  const upstream = sectionOf(upstreamSchema, s.raw.upstream ?? { mode: 'direct' });
  return {
    devices: s.devices.map((d) => d && resolveDevicePaths(d, baseDir)),
    storage: s.storage && resolveStoragePath(s.storage, options),
    mqtt: mqtt && resolveMqttPaths(mqtt, baseDir),
    modbus: s.modbus,
    ocpp: ocpp && resolveOcppPaths(ocpp, baseDir),
    upstream: upstream && resolveUpstreamPaths(upstream, baseDir),
  };
}

function checkable(config: Config): CheckableConfig {
  return { devices: config.devices, storage: config.storage, mqtt: config.mqtt, modbus: config.modbus, ocpp: config.ocpp, upstream: config.upstream };
}

function dedupe(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const abs = (p: string, base: string): string => (p === ':memory:' || isAbsolute(p) ? p : resolve(base, p));

/** Register-map files (not built-in profile names) resolve against the config file's directory. */
function resolveDevicePaths(d: DeviceConfig, baseDir: string): DeviceConfig {
  const fileish = (p: string): boolean => /\.ya?ml$/i.test(p);
  const out: Record<string, unknown> = { ...d };
  for (const cap of ['switch', 'meter', 'thermometer', 'charger'] as const) {
    const s = (d as unknown as Record<string, { type: string; profile?: unknown } | undefined>)[cap];
    if (s && s.type === 'modbus' && typeof s.profile === 'string' && fileish(s.profile)) out[cap] = { ...s, profile: abs(s.profile, baseDir) };
  }
  return out as DeviceConfig;
}

/** TLS files resolve against the config file's directory. */
function resolveMqttPaths(m: NonNullable<Config['mqtt']>, baseDir: string): NonNullable<Config['mqtt']> {
  return {
    ...m,
    ...(m.ca ? { ca: abs(m.ca, baseDir) } : {}),
    ...(m.cert ? { cert: abs(m.cert, baseDir) } : {}),
    ...(m.key ? { key: abs(m.key, baseDir) } : {}),
  };
}

function resolveOcppPaths(o: NonNullable<Config['ocpp']>, baseDir: string): NonNullable<Config['ocpp']> {
  return o.tls ? { ...o, tls: { cert: abs(o.tls.cert, baseDir), key: abs(o.tls.key, baseDir) } } : o;
}

function resolveUpstreamPaths(up: Config['upstream'], baseDir: string): Config['upstream'] {
  return up.mode === 'fleet' && up.ca ? { ...up, ca: abs(up.ca, baseDir) } : up;
}

/** `storage.path` against `$STATE_DIRECTORY` (systemd StateDirectory=) or else the config file's directory. */
function resolveStoragePath(storage: StorageConfig, options: ParseOptions): StorageConfig {
  const baseDir = options.baseDir ?? process.cwd();
  const env = options.env ?? process.env;
  const storageBase = env.STATE_DIRECTORY ? (env.STATE_DIRECTORY.split(':')[0] ?? baseDir) : baseDir;
  return { ...storage, path: abs(storage.path, storageBase) };
}

/**
 * Relative file paths become absolute: `storage.path` against `$STATE_DIRECTORY` (systemd
 * StateDirectory=) or else the config file's directory; TLS files and register-map profiles
 * against the config file's directory.
 */
function resolvePaths(config: Config, options: ParseOptions): Config {
  const baseDir = options.baseDir ?? process.cwd();
  const mqtt = config.mqtt && resolveMqttPaths(config.mqtt, baseDir);
  const devices = config.devices.map((d) => resolveDevicePaths(d, baseDir));
  const ocpp = config.ocpp ? { ocpp: resolveOcppPaths(config.ocpp, baseDir) } : {};
  return {
    ...config,
    ...(mqtt ? { mqtt } : {}),
    ...ocpp,
    upstream: resolveUpstreamPaths(config.upstream, baseDir),
    devices,
    storage: resolveStoragePath(config.storage, options),
  };
}

function configWarnings(config: Config): string[] {
  const out: string[] = [];
  const wh = config.events.webhook;
  if (wh.enabled && wh.secret === undefined)
    out.push('events.webhook.insecureAcceptUnsignedCalls: THE WEBHOOK RECEIVER ACCEPTS UNSIGNED CALLS: anyone who reaches it can cap the home');
  if (config.upstream.mode === 'direct' && !wh.enabled && !config.events.poll)
    out.push('events: polling and the webhook are both off; no event will arrive');
  if (config.devices.length === 0) out.push('devices: no device configured; wattshift will only watch prices');
  if (config.mqtt && !config.mqtt.rejectUnauthorized) out.push("mqtt.rejectUnauthorized: the broker's TLS certificate is not verified");
  if (config.http.enabled && !['127.0.0.1', '::1', 'localhost'].includes(config.http.host)) {
    out.push(`http.host: the status server listens on ${config.http.host}, not only on loopback`);
  }
  return out;
}

function invalid(file: string | undefined, problems: ConfigProblem[], message?: string): WattshiftError {
  const where = file ? `${file}: ` : '';
  const text = message ?? `${where}invalid config (${problems.length} problem${problems.length === 1 ? '' : 's'})`;
  return new WattshiftError('CONFIG_INVALID', text, { details: { ...(file ? { file } : {}), problems } });
}

function pathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : (m[1] ?? ''));
  return out;
}

function issuesToProblems(issues: readonly z.core.$ZodIssue[], where: Located): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  // A misspelt required key is one fault, not two: its "did you mean" stands for the missing key.
  const meant = new Set<string>();
  for (const issue of issues) {
    const segs = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(configSchema, segs);
      for (const key of issue.keys) {
        const near = closest(key, known);
        if (near !== undefined) meant.add(formatPath([...segs, near]));
        out.push(withLocation({ path: formatPath([...segs, key]), message: `unknown key${didYouMean(key, known)}` }, [...segs, key], where, true));
      }
      continue;
    }
    out.push(withLocation({ path: formatPath(segs), message: issueMessage(issue) }, segs, where, false));
  }
  return out.filter((p) => !(meant.has(p.path) && p.message.startsWith('required key is missing')));
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return `required key is missing (expected ${issue.expected})`;
  if (issue.code === 'invalid_type') return issue.message.replace(/^Invalid input: /, '');
  if (issue.code === 'invalid_union') {
    const discriminator = (issue as { discriminator?: string }).discriminator;
    const options = (issue as { options?: unknown[] }).options;
    if (discriminator && options) return `expected one of ${options.map((o) => JSON.stringify(o)).join(', ')}`;
    const values = issue.errors.flat().flatMap((e) => (e.code === 'invalid_value' ? e.values : []));
    if (values.length > 0 && values.length === issue.errors.length) return `expected one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (issue.code === 'too_big' || issue.code === 'too_small') {
    const bound = boundMessage(
      issue,
      issue.path.filter((x): x is string | number => typeof x !== 'symbol'),
    );
    if (bound) return bound;
  }
  if (issue.code === 'invalid_value') {
    const values = issue.values.map((v) => JSON.stringify(v));
    return values.length > 2 ? `expected one of ${values.join(', ')}` : `expected ${values.join(' or ')}`;
  }
  return issue.message;
}

function withLocation(problem: ConfigProblem, segs: readonly (string | number)[], where: Located, keyOnly: boolean): ConfigProblem {
  const pos = where.locate?.(segs, keyOnly);
  return pos ? { ...problem, line: pos.line, column: pos.column } : problem;
}

/** Finds the line of a key path in the YAML document (the nearest existing ancestor for missing keys). */
function locator(doc: Document, lc: LineCounter): NonNullable<Located['locate']> {
  return (path, keyOnly) => {
    let node: unknown = doc.contents;
    let best: Node | undefined = isNodeLike(node) ? node : undefined;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        if (isNodeLike(pair.key)) best = pair.key;
        if (last && keyOnly) break;
        node = pair.value;
        if (isNodeLike(node) && !(isMap(node) || isSeq(node))) best = node;
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
        if (!isNodeLike(node)) break;
        best = node;
      } else {
        break;
      }
    }
    const offset = best?.range?.[0];
    if (offset === undefined) return undefined;
    const pos = lc.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
}

function isNodeLike(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && 'range' in v;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
