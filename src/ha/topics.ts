/**
 * Topic layout (zigbee2mqtt style), all under the configured base topic:
 *
 *   <base>/availability                 online | offline (retained; offline is the last will)
 *   <base>/location                     location JSON (power, limit, LPC cap)
 *   <base>/price, /price/total, /price/delta
 *   <base>/plan                         the next 48 h as JSON
 *   <base>/health                       job health JSON
 *   <base>/bill                         this month's bill so far JSON
 *   <base>/<device>                     device state JSON
 *   <base>/<device>/<field>             scalar state (temperature, power, energy, mode, ...)
 *   <base>/<device>/availability        online | offline
 *   <base>/<device>/set                 command, JSON object or a bare mode
 *   <base>/<device>/set/<field>         command, one scalar field
 *   <base>/request/<device>/set         command with a transaction id ...
 *   <base>/response/<device>/set        ... answered here with {status, data, error, transaction}
 */

/** Names that cannot be device ids because they are topics of their own. */
export const reservedTopicNames = new Set(['availability', 'location', 'price', 'plan', 'health', 'bill', 'request', 'response', 'bridge', 'set']);

/** Scalar state subtopics of a device. */
export const deviceScalarFields = [
  'temperature',
  'power',
  'energy',
  'mode',
  'planned_on',
  'next_start',
  'floor',
  'next_comfort',
  'plugged',
  'charging',
  'soc',
  'departure',
  'target_kwh',
  'target_soc',
  'block_without_lease',
  'current_limit',
  'fuse_limited',
  'session_energy',
  'connector_status',
  'current_l1',
  'current_l2',
  'current_l3',
  'vehicle',
  'phases',
  'sg_state',
  'preset',
  'target_temp',
  'action',
] as const;
export type DeviceScalarField = (typeof deviceScalarFields)[number];

/** Scalar command subtopics (`<base>/<device>/set/<field>`), mapped to command keys. */
export const commandFields = {
  mode: 'mode',
  boost_minutes: 'boostMinutes',
  departure: 'departure',
  target_kwh: 'targetKwh',
  target_soc: 'targetSocPct',
  floor: 'floorC',
} as const;
export type CommandField = keyof typeof commandFields;

export interface HaTopics {
  availability: string;
  location: string;
  price: string;
  priceTotal: string;
  priceDelta: string;
  plan: string;
  health: string;
  bill: string;
  device(deviceId: string): string;
  deviceField(deviceId: string, field: DeviceScalarField): string;
  deviceAvailability(deviceId: string): string;
  set(deviceId: string): string;
  setField(deviceId: string, field: CommandField): string;
  request(deviceId: string): string;
  response(deviceId: string): string;
}

export function haTopics(base: string): HaTopics {
  assertBaseTopic(base);
  return {
    availability: `${base}/availability`,
    location: `${base}/location`,
    price: `${base}/price`,
    priceTotal: `${base}/price/total`,
    priceDelta: `${base}/price/delta`,
    plan: `${base}/plan`,
    health: `${base}/health`,
    bill: `${base}/bill`,
    device: (id) => `${base}/${id}`,
    deviceField: (id, field) => `${base}/${id}/${field}`,
    deviceAvailability: (id) => `${base}/${id}/availability`,
    set: (id) => `${base}/${id}/set`,
    setField: (id, field) => `${base}/${id}/set/${field}`,
    request: (id) => `${base}/request/${id}/set`,
    response: (id) => `${base}/response/${id}/set`,
  };
}

/** Subscription filters that cover every command topic. */
export function commandFilters(base: string): string[] {
  return [`${base}/+/set`, `${base}/+/set/+`, `${base}/request/+/set`];
}

export type ParsedCommandTopic =
  { kind: 'set'; deviceId: string } | { kind: 'setField'; deviceId: string; field: CommandField } | { kind: 'request'; deviceId: string };

/** Parses a command topic; null for anything that is not one (including unknown fields). */
export function parseCommandTopic(base: string, topic: string): ParsedCommandTopic | null {
  if (!topic.startsWith(`${base}/`)) return null;
  const parts = topic.slice(base.length + 1).split('/');
  if (parts.length === 2 && parts[1] === 'set' && parts[0] && !reservedTopicNames.has(parts[0])) {
    return { kind: 'set', deviceId: parts[0] };
  }
  if (parts.length === 3 && parts[0] === 'request' && parts[2] === 'set' && parts[1]) {
    return { kind: 'request', deviceId: parts[1] };
  }
  if (parts.length === 3 && parts[1] === 'set' && parts[0] && !reservedTopicNames.has(parts[0])) {
    const field = parts[2] ?? '';
    if (Object.hasOwn(commandFields, field)) return { kind: 'setField', deviceId: parts[0], field: field as CommandField };
  }
  return null;
}

/** `<base>/<device>/set/<field>` with a field that is not a command: answered, not ignored. */
export function unknownCommandField(base: string, topic: string): { deviceId: string; field: string } | null {
  if (!topic.startsWith(`${base}/`) || parseCommandTopic(base, topic) !== null) return null;
  const parts = topic.slice(base.length + 1).split('/');
  if (parts.length !== 3 || parts[1] !== 'set' || !parts[0] || reservedTopicNames.has(parts[0])) return null;
  return { deviceId: parts[0], field: parts[2] ?? '' };
}

/** MQTT topic filter matching with `+` and `#`. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

function assertBaseTopic(base: string): void {
  if (base.length === 0 || base.startsWith('/') || base.endsWith('/') || /[#+\0]/.test(base)) {
    throw new TypeError(`invalid MQTT base topic: ${JSON.stringify(base)}`);
  }
}

/** Home Assistant discovery ids allow `[a-zA-Z0-9_-]`; anything else becomes `_`. */
export function haSafeId(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}
