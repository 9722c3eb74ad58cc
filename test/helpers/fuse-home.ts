/**
 * The config of a home behind a 3×230 V TN main fuse with a go-e charger (its car due at 19:00)
 * and a HAN meter (AMS reader), on the demo world's sandbox and broker: the whole-daemon fuse tests
 * share it, each with its own topics.
 */
import { parseConfig } from '../../src/config/load.js';
import type { Config, ConfigInput } from '../../src/config/schema.js';

export function goeBehindFuse(input: ConfigInput, o: { fuseA: number; goeTopic: string; hanTopic: string; phaseSwitching?: boolean }): Config {
  return parseConfig({
    ...input,
    site: { ...input.site, fuse: { mainFuseA: o.fuseA, phases: 3, supply: 'TN', meter: 'han', raiseAfterS: 60, staleAfterS: 120 } },
    devices: [
      {
        id: 'car',
        name: 'EV charger',
        kind: 'evCharger',
        staleAfterS: 900,
        safeCurrentA: 6,
        charger: { type: 'goe', topicPrefix: o.goeTopic },
        model: {
          capacityKwh: 60,
          targetEnergyKwh: 40,
          departure: '19:00',
          minCurrentA: 6,
          maxCurrentA: 16,
          phases: 3,
          ...(o.phaseSwitching ? { phaseSwitching: { enabled: true, minIntervalS: 600 } } : {}),
        },
      },
      { id: 'han', name: 'Main meter', kind: 'meter', staleAfterS: 900, meter: { type: 'amsreader', topic: o.hanTopic }, model: { main: true } },
    ],
  }).config;
}
