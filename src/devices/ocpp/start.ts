/** Starts the OCPP central system of the config's `ocpp` section for its `ocpp` chargers. */
import { readFileSync } from 'node:fs';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../ports.js';
import { WattshiftError } from '../../errors.js';
import type { CentralSystem, createCentralSystem } from './central-system.js';

type CentralSystemModule = { createCentralSystem: typeof createCentralSystem };
let centralSystemModule: Promise<CentralSystemModule> | undefined;
/**
 * Loaded only when configured: ocpp-rpc and its schema validator stay off the heap otherwise. Kept
 * once loaded, so a second start (and the simulation kernel, which loads it ahead) waits on no loader.
 */
export function loadCentralSystem(): Promise<CentralSystemModule> {
  return (centralSystemModule ??= import('./central-system.js'));
}

/** `requestTimeoutMs`: how long a request to a charge point may take, ms of `clock` (default 10 s; on an accelerated clock, a real-time budget × speed). */
export async function startCentralSystem(config: Config, deps: { clock: Clock; logger: Logger; requestTimeoutMs?: number }): Promise<CentralSystem> {
  const o = config.ocpp;
  if (!o) throw new WattshiftError('INTERNAL', 'startCentralSystem needs the ocpp section');
  const chargePoints = new Map<string, string>();
  for (const d of config.devices)
    if (d.kind === 'evCharger' && d.charger?.type === 'ocpp') chargePoints.set(d.charger.chargePointId, d.charger.password);
  // Made absolute by the config loader, and checked there; a file gone since is still a config fault (exit 78).
  const read = (key: string, file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new WattshiftError('CONFIG_INVALID', `cannot read ocpp.tls.${key} ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
        cause: err,
      });
    }
  };
  const { createCentralSystem } = await loadCentralSystem();
  const cs = createCentralSystem({
    host: o.host,
    port: o.port,
    heartbeatIntervalS: o.heartbeatIntervalS,
    meterValueSampleIntervalS: o.meterValueSampleIntervalS,
    chargePoints: [...chargePoints].map(([id, password]) => ({ id, password })),
    ...(o.tls ? { tls: { cert: read('cert', o.tls.cert), key: read('key', o.tls.key) } } : {}),
    clock: deps.clock,
    logger: deps.logger,
    ...(deps.requestTimeoutMs !== undefined ? { requestTimeoutMs: deps.requestTimeoutMs } : {}),
  });
  return keepListening(cs, deps);
}

/** How often a central system that could not bind its port tries again, ms of clock time. */
export const listenRetryMs = 60_000;

/**
 * Binds the port, and while another program (or a daemon still stopping) holds it, tries again every
 * minute: meanwhile the chargers are unreachable, their safe behaviour, and the rest of the home is
 * controlled as usual. Logged once as OCPP_LISTEN_FAILED, and once more when it binds.
 */
async function keepListening(cs: CentralSystem, deps: { clock: Clock; logger: Logger }): Promise<CentralSystem> {
  const stop = new AbortController();
  const attempt = async (first: boolean): Promise<boolean> => {
    try {
      await cs.listen();
      if (!first) deps.logger.info({ component: 'ocpp' }, 'OCPP central system bound its port after all');
      return true;
    } catch (err) {
      if (first) {
        deps.logger.error(
          { code: 'OCPP_LISTEN_FAILED', err: err instanceof Error ? err.message : String(err), retryS: listenRetryMs / 1000 },
          'OCPP central system not started: its chargers stay unreachable until it can listen',
        );
      }
      return false;
    }
  };
  if (!(await attempt(true))) {
    void (async () => {
      while (!stop.signal.aborted) {
        await deps.clock.sleep(listenRetryMs, stop.signal).catch(() => undefined);
        if (stop.signal.aborted || (await attempt(false))) return;
      }
    })();
  }
  return {
    listen: () => cs.listen(),
    link: (id) => cs.link(id),
    async close() {
      stop.abort();
      await cs.close();
    },
  };
}
