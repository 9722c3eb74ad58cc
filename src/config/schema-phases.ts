/**
 * 1-phase/3-phase switching of an EV charger (`devices[].model.phaseSwitching`). Re-exported
 * through `./schema-devices.js`.
 *
 * go-e documents the switch as the API v2 key `psm` (phaseSwitchMode: 0 auto, 1 force 1-phase,
 * 2 force 3-phase; Modbus holding register 332 "same as api key psm") and its own guard against
 * toggling as `mptwt` ("min phase toggle wait time (in milliseconds)", a configurable key), but
 * publishes no default value for it (github.com/goecharger/go-eCharger-API-v2,
 * `API_KEYS_FIRMWARE/apikeys-en.md`, `modbus-en.md`). The default below is therefore wattshift's
 * own conservative choice, not a vendor figure; set it at least to the charger's `mptwt`.
 * OCPP 1.6 carries the phase count as a charging schedule period's optional `numberPhases`
 * (§7.13) and states no switching interval; go-e's OCPP stack accepts it to limit charging to
 * one phase (go-eCharger-API-v2 issue #190).
 */
import { z } from 'zod';

export const phaseSwitchingSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'The charger may switch between 1 and 3 phases (go-e: API v2 key `psm`; OCPP 1.6: `numberPhases` in the charging profile, for a charge point that honours it). The plan may then use 1-phase power (from minCurrentA on one phase) up to 3-phase power; with `site.fuse`, 1-phase charging loads `site.fuse.singlePhaseChargerLine`.',
      ),
    minIntervalS: z
      .number()
      .int('whole seconds')
      .min(60, 'must be at least 60 s')
      .max(86_400, 'must be at most 86400 s')
      .default(600)
      .describe(
        "Shortest time between two phase switches, s. go-e documents a configurable minimum toggle wait (`mptwt`, ms) without a default value: set this at least to the charger's `mptwt`. Every switch pauses the car for a few seconds and, on go-e, writes a persisted setting.",
      ),
  })
  .describe('1-phase/3-phase switching (default off: the charger always uses `phases`).');
export type PhaseSwitchingConfig = z.infer<typeof phaseSwitchingSchema>;

/** Charger sources that can switch phases. */
export const phaseSwitchingSources: readonly string[] = ['goe', 'ocpp'];

/** Cross-field rules: switching needs a 3-phase charger whose source can switch. */
export function checkPhaseSwitching(
  d: { charger?: { type: string } | undefined; model: { phases: 1 | 3; phaseSwitching?: PhaseSwitchingConfig | undefined } },
  at: (string | number)[],
  issue: (path: (string | number)[], message: string) => void,
): void {
  if (d.model.phaseSwitching?.enabled !== true) return;
  if (d.model.phases !== 3) issue([...at, 'model', 'phaseSwitching'], 'phase switching needs a 3-phase charger (model.phases: 3)');
  if (d.charger && !phaseSwitchingSources.includes(d.charger.type)) {
    issue(
      [...at, 'model', 'phaseSwitching'],
      `a "${d.charger.type}" charger source cannot switch phases (supported: ${phaseSwitchingSources.join(', ')})`,
    );
  }
}
