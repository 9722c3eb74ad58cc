/** Cross-field rules of the `vehicles` section and the chargers that name them. */
import type { DeviceConfig } from './schema-devices.js';
import type { VehicleConfig } from './schema-vehicles.js';
import { ownTopicProblem } from './topic-check.js';
import { didYouMean } from './suggest.js';

type ReportIssue = (path: (string | number)[], message: string) => void;

/** The cars a charger serves: those it names, else every vehicle. */
export function vehiclesServedBy(charger: { vehicles?: readonly string[] | undefined }, vehicles: readonly VehicleConfig[]): VehicleConfig[] {
  return charger.vehicles ? vehicles.filter((v) => charger.vehicles!.includes(v.id)) : [...vehicles];
}

function checkUnique<T>(
  items: readonly T[],
  key: (item: T) => readonly (string | number)[],
  path: (i: number) => (string | number)[],
  what: string,
  issue: ReportIssue,
): void {
  const seen = new Map<string | number, number>();
  items.forEach((item, i) => {
    for (const k of key(item)) {
      const first = seen.get(k);
      if (first !== undefined && first !== i) issue(path(i), `${what} ${JSON.stringify(k)} is claimed by vehicles[${first}] too`);
      else seen.set(k, i);
    }
  });
}

export function checkVehicles(
  cfg: { vehicles?: readonly (VehicleConfig | undefined)[] | undefined; devices: readonly (DeviceConfig | undefined)[]; mqtt?: unknown },
  issue: ReportIssue,
): void {
  const all = cfg.vehicles ?? [];
  const vehicles = all.filter((v): v is VehicleConfig => v !== undefined);
  const complete = vehicles.length === all.length;
  const deviceIds = new Set(cfg.devices.flatMap((d) => (d ? [d.id] : [])));
  all.forEach((v, i) => {
    if (!v) return;
    const at = ['vehicles', i];
    if (deviceIds.has(v.id)) issue([...at, 'id'], `vehicle id "${v.id}" is also a device id`);
    if (v.soc && cfg.mqtt === undefined) issue([...at, 'soc'], 'a SoC topic needs the mqtt section');
    const own = v.soc ? ownTopicProblem(cfg.mqtt, v.soc.topic) : undefined;
    if (own) issue([...at, 'soc', 'topic'], own);
  });
  const indexed = all.map((v) => v ?? null);
  const present =
    <T>(f: (v: VehicleConfig) => readonly T[]) =>
    (v: VehicleConfig | null): readonly T[] =>
      v ? f(v) : [];
  checkUnique(
    indexed,
    present((v) => [v.id]),
    (i) => ['vehicles', i, 'id'],
    'vehicle id',
    issue,
  );
  checkUnique(
    indexed,
    present((v) => v.identify.idTags),
    (i) => ['vehicles', i, 'identify', 'idTags'],
    'id tag',
    issue,
  );
  checkUnique(
    indexed,
    present((v) => v.identify.goeCards),
    (i) => ['vehicles', i, 'identify', 'goeCards'],
    'go-e card',
    issue,
  );
  checkUnique(
    indexed,
    present((v) => (v.resourceId ? [v.resourceId] : [])),
    (i) => ['vehicles', i, 'resourceId'],
    'resource id',
    issue,
  );

  const known = new Set(vehicles.map((v) => v.id));
  const unknownVehicle = (id: string): string =>
    `unknown vehicle "${id}"${didYouMean(id, [...known])} (vehicles in the config: ${known.size > 0 ? [...known].join(', ') : 'none'})`;
  cfg.devices.forEach((d, i) => {
    if (d?.kind !== 'evCharger') return;
    const at = ['devices', i];
    // An invalid vehicle may be the one meant: only a complete list can tell "unknown".
    if (complete) {
      (d.vehicles ?? []).forEach((id, j) => {
        if (!known.has(id)) issue([...at, 'vehicles', j], unknownVehicle(id));
      });
      if (d.defaultVehicle !== undefined && !known.has(d.defaultVehicle)) issue([...at, 'defaultVehicle'], unknownVehicle(d.defaultVehicle));
    }
    if (d.defaultVehicle !== undefined && d.vehicles && !d.vehicles.includes(d.defaultVehicle)) {
      issue([...at, 'defaultVehicle'], `the default vehicle "${d.defaultVehicle}" is not among the charger's vehicles`);
    }
    if ((d.vehicles !== undefined || d.defaultVehicle !== undefined) && all.length === 0)
      issue([...at, 'vehicles'], 'the charger names vehicles but the vehicles section is empty');
  });
}
