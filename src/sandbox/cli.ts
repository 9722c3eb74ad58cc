import { acceleratedClock, systemClock } from '../clock.js';
import { createLogger } from '../log.js';
import { WattshiftError } from '../errors.js';
import { defaultCredentials } from './auth.js';
import { startSandbox, type Sandbox } from './server.js';

/**
 * `wattshift sandbox --port N [--host H] [--seed S] [--speed X] [--client-id ID --client-secret S]`:
 * runs the sandbox until SIGINT/SIGTERM and prints where it listens and which credentials it
 * accepts (by default the documented local pair wattshift-local / local-secret).
 */
export async function runSandboxCommand(argv: string[], io: { stdout: (line: string) => void }, signal?: AbortSignal): Promise<void> {
  const args = parseArgs(argv);
  const speed = args.speed ?? 1;
  const clock = speed === 1 ? systemClock : acceleratedClock(Date.now(), speed);
  const partners = args.clientId ? [{ clientId: args.clientId, clientSecret: args.clientSecret ?? '' }] : [defaultCredentials];
  const sandbox: Sandbox = await startSandbox({
    ...(args.port !== undefined ? { port: args.port } : {}),
    ...(args.host !== undefined ? { host: args.host } : {}),
    seed: args.seed ?? 1,
    clock,
    partners,
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }),
  });
  io.stdout(`wattshift sandbox listening (seed ${args.seed ?? 1}, clock speed ${speed}x)`);
  io.stdout(`  Energy Coordination API: ${sandbox.baseUrl}`);
  io.stdout(`  token endpoint:          ${sandbox.authUrl}/connect/token`);
  io.stdout(`  forecast price service:  ${sandbox.forecastUrl}`);
  io.stdout(`  weather (MET Norway):    ${sandbox.weatherUrl}`);
  for (const c of sandbox.credentials) io.stdout(`  client_id=${c.clientId} client_secret=${c.clientSecret}`);
  io.stdout('Press Ctrl+C to stop.');
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    signal?.addEventListener('abort', stop, { once: true });
  });
  await sandbox.close();
  io.stdout('sandbox stopped');
}

interface SandboxArgs {
  port?: number;
  host?: string;
  seed?: number;
  speed?: number;
  clientId?: string;
  clientSecret?: string;
}

function parseArgs(argv: string[]): SandboxArgs {
  const out: SandboxArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const [name, inline] = flag.includes('=') ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)] : [flag, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new WattshiftError('CONFIG_INVALID', `${name} needs a value`);
      return v;
    };
    const num = (min: number, integer: boolean): number => {
      const v = Number(value());
      if (!Number.isFinite(v) || v < min || (integer && !Number.isInteger(v)))
        throw new WattshiftError('CONFIG_INVALID', `${name} must be a number of at least ${min}`);
      return v;
    };
    if (name === 'sandbox') continue;
    else if (name === '--port') out.port = num(0, true);
    else if (name === '--host') out.host = value();
    else if (name === '--seed') out.seed = num(0, true);
    else if (name === '--speed') out.speed = num(0.001, false);
    else if (name === '--client-id') out.clientId = value();
    else if (name === '--client-secret') out.clientSecret = value();
    else throw new WattshiftError('CONFIG_INVALID', `unknown option ${flag} (use --port, --host, --seed, --speed, --client-id, --client-secret)`);
  }
  if (out.port !== undefined && out.port > 65535) throw new WattshiftError('CONFIG_INVALID', '--port must be at most 65535');
  if (out.clientId && !out.clientSecret) throw new WattshiftError('CONFIG_INVALID', '--client-id needs --client-secret');
  return out;
}
