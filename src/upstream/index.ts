/** Picks the daemon's upstream adapter from `upstream.mode`. */
import type { Config } from '../config/schema.js';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import { createDirectUpstream } from './direct.js';
import { createFleetUpstream } from './fleet.js';
import type { Upstream } from './port.js';

export type { Upstream, UpstreamSinks, UpstreamHealth } from './port.js';

export function createUpstream(config: Config, deps: { clock: Clock; logger: Logger; checkCredentials: boolean }): Upstream {
  const up = config.upstream;
  return up.mode === 'fleet' ? createFleetUpstream(config, up, deps) : createDirectUpstream(config, deps);
}
