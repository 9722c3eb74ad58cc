/**
 * The unit of a config number, read from its key's suffix (the schema's naming rule: `elementKw`,
 * `floorC`, `frozenWindowMinutes`), so that a bound in an error message says what it counts.
 */
const suffixes: ReadonlyArray<[RegExp, string]> = [
  [/PerKwh$/, ' per kWh'],
  [/WPerK$/, ' W/K'],
  [/Kwh$/, ' kWh'],
  [/Kw$/, ' kW'],
  [/Minutes$/, ' minutes'],
  [/Hours$/, ' hours'],
  [/Days$/, ' days'],
  [/Ms$/, ' ms'],
  [/S$/, ' s'],
  [/Pct$/, ' %'],
  [/[a-z]C$/, ' °C'],
  [/[a-z]A$/, ' A'],
  [/[a-z]V$/, ' V'],
  [/[a-z]L$/, ' litres'],
];

/** ` kW`, ` °C`, … for a key; empty when the key names no unit. */
export function unitOfKey(key: string): string {
  return suffixes.find(([re]) => re.test(key))?.[1] ?? '';
}

/** The last named key of an issue path (array indexes skipped: `drawProfileKwh[3]` → `drawProfileKwh`). */
function keyOf(path: readonly (string | number)[]): string {
  for (let i = path.length - 1; i >= 0; i--) if (typeof path[i] === 'string') return path[i] as string;
  return '';
}

interface BoundIssue {
  code: 'too_big' | 'too_small';
  origin: string;
  inclusive?: boolean;
  maximum?: number | bigint;
  minimum?: number | bigint;
}

/** "must be at most 240 minutes" for a number out of its range; undefined for other issues. */
export function boundMessage(issue: BoundIssue, path: readonly (string | number)[]): string | undefined {
  if (issue.origin !== 'number') return undefined;
  const unit = unitOfKey(keyOf(path));
  if (issue.code === 'too_big') return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}${unit}`;
  return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${String(issue.minimum)}${unit}`;
}
