/** Starts the OCPP central system of the config's `ocpp` section for its `ocpp` chargers. */
import { readFileSync } from 'node:fs';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../ports.js';
import { WattshiftError } from '../../errors.js';
import type { CentralSystem } from './central-system.js';

export async function startCentralSystem(config: Config, deps: { clock: Clock; logger: Logger }): Promise<CentralSystem> {
  const o = config.ocpp;
  if (!o) throw new WattshiftError('INTERNAL', 'startCentralSystem needs the ocpp section');
  const chargePoints = new Map<string, string>();
  for (const d of config.devices) if (d.kind === 'evCharger' && d.charger?.type === 'ocpp') chargePoints.set(d.charger.chargePointId, d.charger.password);
  const read = (file: string): string => readFileSync(file, 'utf8'); // made absolute by the config loader
  // Loaded only when configured: ocpp-rpc and its schema validator stay off the heap otherwise.
  const { createCentralSystem } = await import('./central-system.js');
  const cs = createCentralSystem({
    host: o.host, port: o.port, heartbeatIntervalS: o.heartbeatIntervalS, meterValueSampleIntervalS: o.meterValueSampleIntervalS,
    chargePoints: [...chargePoints].map(([id, password]) => ({ id, password })),
    ...(o.tls ? { tls: { cert: read(o.tls.cert), key: read(o.tls.key) } } : {}),
    clock: deps.clock, logger: deps.logger,
  });
  // A port taken by another program leaves the chargers unreachable (their safe behaviour), not the home uncontrolled.
  await cs.listen().catch((err: unknown) => {
    deps.logger.error({ code: err instanceof WattshiftError ? err.code : 'DEVICE_UNREACHABLE', err: err instanceof Error ? err.message : String(err) }, 'OCPP central system not started: its chargers stay unreachable');
  });
  return cs;
}
