/**
 * Plans are stored as JSON with the key names of the plan's types. Versions before the unit
 * spelling was settled on `Kwh`/`Kw` wrote `energyKWh`, `powerKW`, `heldAtKWhPerH`; reading
 * those keys back in the house spelling lets a plan stored by such a version still be read.
 */
const legacyUnit = /(?<=[a-z0-9])KW(h?)(?![a-z])/g;

/** `value` with every object key's `KWh`/`KW` spelt `Kwh`/`Kw`, at any depth. */
export function withHouseUnitKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withHouseUnitKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key.replace(legacyUnit, 'Kw$1'), withHouseUnitKeys(v)]));
}
