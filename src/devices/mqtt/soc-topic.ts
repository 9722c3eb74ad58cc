/**
 * The car's state of charge from an MQTT topic (a car integration, Home Assistant, a script): JSON
 * with a dot path, or a bare number, scaled to percent. Only a fresh value counts: an older one
 * (or none, or a bad one) leaves the SoC unknown, and the planner then uses the energy estimate.
 */
import type { SocTopicConfig } from '../../config/schema.js';
import type { EvStateReader } from '../../ports.js';
import { LatestValues } from './values.js';
import { atPath, guard, parseJson, plausible } from './util.js';
import type { MqttDeviceDeps } from './types.js';

export interface SocTopic {
  /** The SoC in percent, or undefined when it is unknown, stale or unusable. */
  socPct(): number | undefined;
  close(): void;
}

export function createSocTopic(config: SocTopicConfig, deps: MqttDeviceDeps & { device: string }): SocTopic {
  const log = deps.logger.child({ component: 'soc', device: deps.device });
  const values = new LatestValues({
    device: deps.device,
    clock: deps.clock,
    staleAfterMs: config.staleAfterS * 1000,
    isConnected: () => deps.connection.connected,
  });
  const unsubscribe = deps.connection.subscribe(config.topic, (_topic, payload) => {
    guard(
      (err) => {
        values.bad('soc', err);
        log.warn({ code: err.code, err: err.message }, 'unusable SoC payload: the SoC counts as unknown');
      },
      () => {
        const raw = atPath(parseJson(payload, `${deps.device} SoC`), config.path);
        values.put('soc', plausible(Number(raw) * config.scale, 0, 100, `${deps.device} SoC`));
      },
    );
  });
  return {
    socPct() {
      try {
        return values.get('soc') as number;
      } catch {
        return undefined;
      }
    },
    close: unsubscribe,
  };
}

/** The charger's car state with the topic's SoC where the charger gives none. */
export function withSoc(reader: EvStateReader, soc: SocTopic): EvStateReader {
  return {
    async readEvState(signal) {
      const state = await reader.readEvState(signal);
      if (state.socPct !== undefined) return state;
      const pct = soc.socPct();
      return pct === undefined ? state : { ...state, socPct: pct };
    },
  };
}
