/**
 * Loads Modbus device profiles: built-ins by name from the package's `profiles/` directory, user
 * register maps by file path.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { WattshiftError } from '../../errors.js';
import { packageRoot } from '../../package-root.js';
import { profileSchema, type ModbusProfile } from './profile-schema.js';

function builtinDir(): string {
  return join(packageRoot(), 'profiles');
}

const builtinName = /^[a-z0-9][a-z0-9-]*$/;
const cache = new Map<string, ModbusProfile>();

/** Names of the built-in profiles. */
export function builtinProfileNames(): string[] {
  const dir = builtinDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .map((f) => f.replace(/\.(ya?ml|json)$/, ''))
    .sort();
}

/** Parses and validates profile text (YAML or JSON); `source` names it in errors. */
export function parseProfile(text: string, source: string): ModbusProfile {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `${source}: not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  const parsed = profileSchema.safeParse(data);
  if (!parsed.success) {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `${source}: ${z.prettifyError(parsed.error)}`, {
      details: { source, issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
    });
  }
  return parsed.data;
}

function readProfileFile(path: string): ModbusProfile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `cannot read profile ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseProfile(text, path);
}

/**
 * A built-in profile by name (`eastron-sdm120`) or a user profile by path (`./my-meter.yaml`,
 * relative to `baseDir`, normally the config file's directory, else the working directory).
 */
export function loadProfile(nameOrPath: string, options: { baseDir?: string } = {}): ModbusProfile {
  if (builtinName.test(nameOrPath)) {
    const hit = cache.get(nameOrPath);
    if (hit) return hit;
    const file = ['.yaml', '.yml', '.json'].map((ext) => join(builtinDir(), nameOrPath + ext)).find((f) => existsSync(f));
    if (!file) {
      throw new WattshiftError('DEVICE_PROFILE_INVALID', `unknown Modbus profile "${nameOrPath}"`, {
        details: { known: builtinProfileNames() },
      });
    }
    const profile = readProfileFile(file);
    if (profile.name !== nameOrPath) {
      throw new WattshiftError('DEVICE_PROFILE_INVALID', `${file}: name "${profile.name}" does not match the file name`);
    }
    cache.set(nameOrPath, profile);
    return profile;
  }
  const path = isAbsolute(nameOrPath) ? nameOrPath : resolve(options.baseDir ?? process.cwd(), nameOrPath);
  return readProfileFile(path);
}
