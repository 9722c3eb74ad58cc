import { z } from 'zod';
import { codeOf, WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import { rateLimitedWarn } from '../log-limit.js';
import { didYouMean } from '../config/suggest.js';
import type { HaMqttPort } from './port.js';
import { commandFields, commandFilters, haTopics, parseCommandTopic, unknownCommandField } from './topics.js';
import type { ParsedCommandTopic } from './topics.js';
import type { DeviceKind } from '../view/model.js';
import { zonePresetNames } from '../config/schema-zone.js';

const modeSchema = z.enum(['auto', 'off', 'boost']);

/** The fields a command may carry; at least one must be present. */
const commandFieldsSchema = z.strictObject({
  mode: modeSchema.optional(),
  /** Boost length; implies `mode: boost` when given alone. */
  boostMinutes: z
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .optional(),
  /** EV departure time, ISO 8601 with an offset (Home Assistant sends UTC). */
  departure: z.iso.datetime({ offset: true }).optional(),
  targetKwh: z.number().min(0).max(200).optional(),
  targetSocPct: z.number().min(0).max(100).optional(),
  /** Tank comfort floor, °C. */
  floorC: z.number().min(5).max(85).optional(),
  /** A heated zone's preset (`comfort` follows its schedule). */
  preset: z.enum(zonePresetNames).optional(),
});

export const deviceCommandSchema = commandFieldsSchema
  .extend({ deviceId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) })
  .refine((c) => Object.keys(c).some((k) => k !== 'deviceId'), { message: 'the command sets nothing' });

/** A validated command for one device. */
export type DeviceCommand = z.infer<typeof deviceCommandSchema>;

const evOnly = ['departure', 'targetKwh', 'targetSocPct'] as const;

/** Fields each kind of device accepts. */
function allowedFor(kind: DeviceKind): ReadonlySet<string> {
  switch (kind) {
    case 'hotWaterTank':
    case 'heatPump':
      return new Set(['mode', 'boostMinutes', 'floorC']);
    case 'evCharger':
      return new Set(['mode', 'boostMinutes', ...evOnly]);
    case 'zone':
      return new Set(['preset']);
    case 'meter':
    case 'solar':
      return new Set();
  }
}

export interface CommandResponse {
  status: 'ok' | 'error';
  data: Record<string, unknown>;
  error?: { code: string; message: string };
  transaction?: string | number;
}

export interface CommandDevice {
  id: string;
  kind: DeviceKind;
}

/**
 * Turns one MQTT message into a validated command. Throws `MQTT_COMMAND_INVALID` with a
 * readable message for anything malformed, unknown or not applicable to the device.
 */
export function parseCommand(
  parsed: ParsedCommandTopic,
  payload: string,
  devices: readonly CommandDevice[],
): { command: DeviceCommand; transaction?: string | number } {
  const device = devices.find((d) => d.id === parsed.deviceId);
  if (!device) throw invalid(`unknown device '${parsed.deviceId}'`);
  let raw: Record<string, unknown>;
  let transaction: string | number | undefined;
  if (parsed.kind === 'setField') {
    raw = { [commandFields[parsed.field]]: scalarValue(parsed.field, payload) };
  } else {
    const body = parseJsonOrBare(payload, parsed.kind === 'set');
    if (parsed.kind === 'request') {
      const tx = body['transaction'];
      if (tx !== undefined && typeof tx !== 'string' && typeof tx !== 'number') throw invalid('transaction must be a string or a number');
      transaction = tx as string | number | undefined;
      delete body['transaction'];
    }
    raw = body;
  }
  if (raw['boostMinutes'] !== undefined && raw['mode'] === undefined) raw['mode'] = 'boost';
  // `Auto`, `BOOST`: what a person types in a dashboard means the mode all the same.
  if (typeof raw['mode'] === 'string') raw['mode'] = raw['mode'].trim().toLowerCase();
  const claimed = raw['deviceId'];
  if (claimed !== undefined && claimed !== device.id) {
    throw invalid(`deviceId ${JSON.stringify(claimed)} does not match the topic's device '${device.id}'`);
  }
  const result = deviceCommandSchema.safeParse({ ...raw, deviceId: device.id });
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw invalid(`${where}${issue?.message ?? 'invalid command'}`);
  }
  const allowed = allowedFor(device.kind);
  const extra = Object.keys(result.data).filter((k) => k !== 'deviceId' && !allowed.has(k));
  if (extra.length > 0) throw invalid(`${extra.join(', ')} not supported by a ${device.kind}`);
  if (result.data.boostMinutes !== undefined && result.data.mode !== 'boost') {
    throw invalid('boostMinutes needs mode boost');
  }
  return transaction === undefined ? { command: result.data } : { command: result.data, transaction };
}

function invalid(message: string): WattshiftError {
  return new WattshiftError('MQTT_COMMAND_INVALID', message);
}

/** A JSON object, or (on plain `/set`) a bare mode such as `boost`. */
function parseJsonOrBare(payload: string, bareModeAllowed: boolean): Record<string, unknown> {
  const text = payload.trim();
  if (bareModeAllowed && modeSchema.safeParse(text.toLowerCase()).success) return { mode: text };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('payload is neither JSON nor a mode (auto, off, boost)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('payload must be a JSON object');
  return { ...(value as Record<string, unknown>) };
}

function scalarValue(field: keyof typeof commandFields, payload: string): unknown {
  const text = payload.trim();
  if (field === 'mode' || field === 'departure') return text;
  if (text === '' || !/^-?\d+(\.\d+)?$/.test(text)) throw invalid(`${field}: '${text}' is not a number`);
  return Number(text);
}

/** Largest command payload read, bytes; a larger one is refused unread. */
export const maxCommandBytes = 4096;
/** Commands waiting to be applied; more are refused until the queue drains (a flood). */
export const maxQueuedCommands = 32;

export interface CommandListenerOptions {
  port: HaMqttPort;
  baseTopic: string;
  logger: Logger;
  /** The devices currently configured. */
  devices: () => readonly CommandDevice[];
  /** Applies a validated command; a rejection becomes an error response. */
  onCommand: (cmd: DeviceCommand) => Promise<void>;
  /** Told about each refused command or oversized message, with its code (for counters). */
  onRefused?: (code: string) => void;
  /** Told the outcome of every command, rejected ones included (for `/metrics`). */
  onOutcome?: (ok: boolean, code?: string) => void;
}

/**
 * Subscribes to the command topics. Every command gets a response on
 * `<base>/response/<device>/set` (not retained); a bad one changes nothing. After a command is
 * handled its topic is cleared with an empty retained message, so a retained command is applied
 * once and never replayed at the next start (the empty echo is ignored).
 */
export async function startCommandListener(options: CommandListenerOptions): Promise<void> {
  const t = haTopics(options.baseTopic);
  const log = options.logger.child({ component: 'ha-commands' });
  const warn = rateLimitedWarn(log);
  // A person's typo in a command is answered on the response topic; the log notes it, no warning.
  const userMistake = rateLimitedWarn(log, { level: 'info' });
  // Commands are applied one at a time, in arrival order.
  let chain: Promise<void> = Promise.resolve();
  let queued = 0;
  const handle = (topic: string, payload: Buffer): void => {
    const parsed = parseCommandTopic(options.baseTopic, topic);
    if (!parsed) {
      const unknown = unknownCommandField(options.baseTopic, topic);
      if (unknown && payload.length > 0 && queued < maxQueuedCommands) {
        queued++;
        chain = chain.then(() => refuseUnknownField(topic, unknown)).finally(() => queued--);
      }
      return;
    }
    if (payload.length === 0) return;
    if (queued >= maxQueuedCommands) {
      options.onRefused?.('MQTT_COMMAND_LIMITED');
      options.onOutcome?.(false, 'MQTT_COMMAND_LIMITED');
      warn('MQTT_COMMAND_LIMITED', { topic, queued }, 'command queue full: command dropped');
      return;
    }
    queued++;
    const next =
      payload.length > maxCommandBytes
        ? () => refuseTooLarge(topic, parsed, payload.length)
        : () => handleOne(topic, parsed, payload.toString('utf8'));
    chain = chain.then(next).finally(() => queued--);
  };
  async function refuseTooLarge(topic: string, parsed: ParsedCommandTopic, bytes: number): Promise<void> {
    options.onRefused?.('MQTT_MESSAGE_TOO_LARGE');
    options.onOutcome?.(false, 'MQTT_MESSAGE_TOO_LARGE');
    warn('MQTT_MESSAGE_TOO_LARGE', { topic, bytes, limit: maxCommandBytes }, 'command over the size limit refused unread');
    await finish(topic, parsed, error('MQTT_MESSAGE_TOO_LARGE', `payload of ${bytes} bytes is over the ${maxCommandBytes}-byte limit`));
  }
  async function refuseUnknownField(topic: string, unknown: { deviceId: string; field: string }): Promise<void> {
    const known = Object.keys(commandFields);
    const message = `unknown command '${unknown.field.slice(0, 64)}'${didYouMean(unknown.field, known)}; commands: ${known.join(', ')}`;
    options.onRefused?.('MQTT_COMMAND_INVALID');
    options.onOutcome?.(false, 'MQTT_COMMAND_INVALID');
    userMistake('MQTT_COMMAND_INVALID', { topic: topic.slice(0, 200) }, 'command to an unknown topic answered with an error');
    await finish(topic, { kind: 'set', deviceId: unknown.deviceId }, error('MQTT_COMMAND_INVALID', message));
  }
  async function handleOne(topic: string, parsed: ParsedCommandTopic, payload: string): Promise<void> {
    let response: CommandResponse;
    try {
      const { command, transaction } = parseCommand(parsed, payload, options.devices());
      await options.onCommand(command);
      const { deviceId: _id, ...data } = command;
      response = { status: 'ok', data, ...(transaction === undefined ? {} : { transaction }) };
      log.info({ command }, 'command applied');
      options.onOutcome?.(true);
    } catch (err) {
      const code = codeOf(err);
      const message = err instanceof Error ? err.message : String(err);
      const transaction = parsed.kind === 'request' ? transactionOf(payload) : undefined;
      response = { ...error(code, message), ...(transaction === undefined ? {} : { transaction }) };
      options.onRefused?.(code);
      options.onOutcome?.(false, code);
      (code === 'MQTT_COMMAND_INVALID' ? userMistake : warn)(code, { deviceId: parsed.deviceId, err: message }, 'command rejected');
    }
    await finish(topic, parsed, response);
  }
  async function finish(topic: string, parsed: ParsedCommandTopic, response: CommandResponse): Promise<void> {
    try {
      await options.port.publish(topic, '', { retain: true, qos: 1 });
      await options.port.publish(t.response(parsed.deviceId), JSON.stringify(response), { retain: false, qos: 1 });
    } catch (err) {
      warn('MQTT_UNAVAILABLE', { err: err instanceof Error ? err.message : String(err) }, 'could not clear a command or publish its response');
    }
  }
  for (const filter of commandFilters(options.baseTopic)) await options.port.subscribe(filter, handle);
}

function error(code: string, message: string): CommandResponse {
  return { status: 'error', data: {}, error: { code, message } };
}

/** Best effort: the transaction id of a request whose payload failed later validation. */
function transactionOf(payload: string): string | number | undefined {
  try {
    const v: unknown = JSON.parse(payload);
    const tx = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)['transaction'] : undefined;
    return typeof tx === 'string' || typeof tx === 'number' ? tx : undefined;
  } catch {
    return undefined;
  }
}
