/**
 * A simulated OCPP 1.6J charge point with one connector and a car battery, behaving as the OCPP 1.6
 * specification (edition 2) and OCPP-J 1.6 specify:
 *
 * - connects over WebSocket with subprotocol `ocpp1.6` to `<url>/<identity>`, with HTTP basic auth
 *   (Security Profile 1 of the OCPP 1.6 Security Whitepaper) when it has a password, and reconnects
 *   with backoff after losing the central system (ocpp-rpc's client);
 * - after its own start it sends BootNotification (§4.2), takes the heartbeat interval from the
 *   answer, then StatusNotification for connector 0 and 1; a reconnection is not a boot;
 * - Heartbeat (§4.6) only when nothing else was sent for HeartbeatInterval;
 * - StatusNotification (§4.9) on every change of the connector's status (§7.7): Available,
 *   Preparing (car plugged, no transaction), Charging, SuspendedEVSE (limit below 6 A),
 *   SuspendedEV (battery full);
 * - MeterValues (§4.7) every MeterValueSampleInterval seconds of a transaction, with the measurands
 *   of MeterValuesSampledData (Energy.Active.Import.Register in Wh, Power.Active.Import in W);
 * - Start/StopTransaction (§4.8, §4.10) when a remote start is accepted, a remote stop comes or the
 *   car is unplugged; a car plugged with an id tag (its card) is first authorised (Authorize, §4.1)
 *   and, once Accepted, starts its own transaction with that tag;
 * - answers ChangeConfiguration and GetConfiguration (§5.3, §5.8, keys of §9.1 and §9.4),
 *   SetChargingProfile and ClearChargingProfile (§5.16, §5.5; profiles as `ocpp-profiles.ts`),
 *   RemoteStart/StopTransaction (§5.11, §5.12) and TriggerMessage (§5.17); other requests get a
 *   NotImplemented CALLERROR (OCPP-J §4.2.3);
 * - configuration keys and default/max charging profiles persist in `statePath` across restarts;
 * - a charging schedule period's `numberPhases` (§7.13, "the number of phases that can be used
 *   for charging", 3 when absent): 1 makes it charge on one phase, at once (OCPP 1.6 states no
 *   switching time); this simulator does not model 2.
 *
 * Messages that fall while disconnected are not queued (a real charger queues transaction
 * messages); the central system asks for the status again on reconnection. A card presented while
 * disconnected is presented (Authorize) once connected, if the car is still plugged in. Time moves only through
 * `advance(ms)`; per-hour energy is the ground truth for tests.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { RPCClient, createRPCError } from 'ocpp-rpc';
import { pluggedBattery, type EvBattery } from './ev-battery.js';
import type { GoeSimPlug } from './goe-sim.js';
import { activeLimitA, activeNumberPhases, nextProfileChangeMs, type ChargingProfile, type StoredProfile } from './ocpp-profiles.js';
import { wattsPerAmp, type Supply } from '../../core/fuse.js';

const hourMs = 3_600_000;
const minCurrentA = 6;
const writableKeys: Record<string, (v: string) => boolean> = {
  HeartbeatInterval: (v) => /^\d+$/.test(v),
  MeterValueSampleInterval: (v) => /^\d+$/.test(v),
  MeterValuesSampledData: (v) => v.split(',').every((m) => ['Energy.Active.Import.Register', 'Power.Active.Import'].includes(m.trim())),
};
const readOnlyKeys: Record<string, string> = {
  NumberOfConnectors: '1',
  SupportedFeatureProfiles: 'Core,SmartCharging,RemoteTrigger',
  ChargeProfileMaxStackLevel: '8',
  ChargingScheduleAllowedChargingRateUnit: 'Current',
};

export interface OcppChargePointSimOptions {
  /** The central system's endpoint without the identity, e.g. `ws://127.0.0.1:8887/ocpp`. */
  url: string;
  identity: string;
  password?: string;
  startMs: number;
  phases?: 1 | 3;
  /** The supply it hangs on: on an IT 3×230 V supply a 3-phase charge draws √3·U·I, not 3·U·I (default TN). */
  supply?: Supply;
  voltageV?: number;
  maxCurrentA?: number;
  plugs?: GoeSimPlug[];
  /** JSON file for the persisted configuration keys and profiles. */
  statePath?: string;
  /** CA certificate (PEM) that the central system's wss:// certificate is checked against. */
  ca?: string;
  /** Backoff of reconnection attempts, ms (default 200..2000). */
  reconnectMs?: { initial: number; max: number };
}

type Status = 'Available' | 'Preparing' | 'Charging' | 'SuspendedEVSE' | 'SuspendedEV' | 'Finishing';

interface Persisted {
  config: Record<string, string>;
  profiles: StoredProfile[];
}

export function createOcppChargePointSim(options: OcppChargePointSimOptions) {
  const phases = options.phases ?? 3;
  const voltage = options.voltageV ?? 230;
  const maxCurrentA = options.maxCurrentA ?? 32;
  const loaded: Persisted =
    options.statePath && existsSync(options.statePath)
      ? (JSON.parse(readFileSync(options.statePath, 'utf8')) as Persisted)
      : {
          config: { HeartbeatInterval: '300', MeterValueSampleInterval: '60', MeterValuesSampledData: 'Energy.Active.Import.Register' },
          profiles: [],
        };
  const config = loaded.config;
  let profiles = loaded.profiles;
  let now = options.startMs;
  let totalWh = 0;
  let lastSentMs = now;
  let booted = false;
  let status: Status = 'Available';
  let tx: { id: number; startMs: number; nextSampleMs: number } | undefined;
  let offlineTag: string | undefined;
  const plugs = [...(options.plugs ?? [])].sort((a, b) => a.atMs - b.atMs);
  let active: { plug: GoeSimPlug; battery: EvBattery } | undefined;
  const hours = new Map<number, number>();
  const received: string[] = [];
  const pending = new Set<Promise<unknown>>();
  const refusing = new Set<string>();

  const client = new RPCClient({
    endpoint: options.url,
    identity: options.identity,
    password: options.password ?? null,
    protocols: ['ocpp1.6'],
    strictMode: true,
    callTimeoutMs: 5000,
    ...(options.ca ? { wsOpts: { ca: options.ca } } : {}),
    reconnect: true,
    backoff: { initialDelay: options.reconnectMs?.initial ?? 200, maxDelay: options.reconnectMs?.max ?? 2000, factor: 2, randomisationFactor: 0 },
  } as ConstructorParameters<typeof RPCClient>[0]);

  const persist = (): void => {
    if (!options.statePath) return;
    const kept = profiles.filter((p) => p.profile.chargingProfilePurpose !== 'TxProfile');
    writeFileSync(options.statePath, JSON.stringify({ config, profiles: kept } satisfies Persisted));
  };
  const intKey = (key: string): number => Number(config[key] ?? '0');
  const iso = (): string => new Date(now).toISOString();

  /** Sends (ocpp-rpc sends one call at a time, in order); nothing while disconnected. */
  const send = (method: string, params: unknown): Promise<unknown> => {
    if (client.state !== RPCClient.OPEN) return Promise.resolve(undefined);
    lastSentMs = now;
    const p = client.call(method, params).catch(() => undefined);
    pending.add(p);
    void p.finally(() => pending.delete(p));
    return p;
  };

  const offeredA = (): number => {
    const limit = Math.min(maxCurrentA, activeLimitA(profiles, 1, now, tx) ?? maxCurrentA);
    return limit < minCurrentA ? 0 : Math.floor(limit);
  };
  /** The phases it charges on: its own, or one where the profile in force says `numberPhases` 1. */
  const phasesNow = (): 1 | 3 => (activeNumberPhases(profiles, 1, now, tx) === 1 ? 1 : phases);
  const powerW = (): number => (tx && active && !active.battery.full ? offeredA() * wattsPerAmp(options.supply ?? 'TN', phasesNow(), voltage) : 0);
  const currentStatus = (): Status => {
    if (!active) return 'Available';
    if (!tx) return status === 'Finishing' ? 'Finishing' : 'Preparing';
    if (active.battery.full) return 'SuspendedEV';
    return offeredA() > 0 ? 'Charging' : 'SuspendedEVSE';
  };
  const sendStatus = (connectorId: number, s: string): Promise<unknown> =>
    send('StatusNotification', { connectorId, errorCode: 'NoError', status: s, timestamp: iso() });
  const updateStatus = (): void => {
    const s = currentStatus();
    if (s === status) return;
    status = s;
    void sendStatus(1, s);
  };
  const sendMeterValues = (): Promise<unknown> => {
    const wanted = (config.MeterValuesSampledData ?? '').split(',').map((m) => m.trim());
    const sampledValue = [
      ...(wanted.includes('Energy.Active.Import.Register')
        ? [{ value: String(Math.floor(totalWh)), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }]
        : []),
      ...(wanted.includes('Power.Active.Import') ? [{ value: String(powerW()), measurand: 'Power.Active.Import', unit: 'W' }] : []),
    ];
    return send('MeterValues', { connectorId: 1, ...(tx ? { transactionId: tx.id } : {}), meterValue: [{ timestamp: iso(), sampledValue }] });
  };

  const sendStop = (transactionId: number, reason: string): Promise<unknown> =>
    send('StopTransaction', { transactionId, meterStop: Math.floor(totalWh), timestamp: iso(), reason });

  const startTransaction = async (idTag: string, profile: ChargingProfile | undefined): Promise<void> => {
    const answer = (await send('StartTransaction', { connectorId: 1, idTag, meterStart: Math.floor(totalWh), timestamp: iso() })) as
      { transactionId?: number } | undefined;
    if (answer?.transactionId === undefined) return;
    if (!active) {
      // The car left while the answer was on its way: the transaction ends at once (§4.10).
      void sendStop(answer.transactionId, 'EVDisconnected');
      return;
    }
    tx = { id: answer.transactionId, startMs: now, nextSampleMs: now + intKey('MeterValueSampleInterval') * 1000 };
    if (profile) profiles.push({ connectorId: 1, profile: { ...profile, transactionId: tx.id } });
    updateStatus();
  };
  /** A card presented with the car: Authorize (§4.1), and on Accepted a transaction of its own (§4.8). */
  const authorizeAndStart = async (idTag: string): Promise<void> => {
    // Offline, the card waits for the connection (a charger authorises it from its cache or asks
    // once it is back, §3.5, and queues the transaction messages that follow).
    if (client.state !== RPCClient.OPEN || !booted) {
      offlineTag = idTag;
      return;
    }
    offlineTag = undefined;
    const answer = (await send('Authorize', { idTag })) as { idTagInfo?: { status?: string } } | undefined;
    if (answer?.idTagInfo?.status === 'Accepted' && active && !tx) await startTransaction(idTag, undefined);
  };
  const stopTransaction = (reason: string): void => {
    if (!tx) return;
    const id = tx.id;
    tx = undefined;
    profiles = profiles.filter((p) => p.profile.chargingProfilePurpose !== 'TxProfile'); // §3.13.1: TxProfile ends with its transaction
    void sendStop(id, reason);
    status = active ? 'Finishing' : status;
    if (active) void sendStatus(1, 'Finishing');
    updateStatus();
  };

  const updatePlug = (): void => {
    if (active?.plug.untilMs !== undefined && active.plug.untilMs <= now) {
      active = undefined;
      offlineTag = undefined; // a card not yet presented leaves with its car
      stopTransaction('EVDisconnected');
      updateStatus();
    }
    const next = plugs[0];
    if (!active && next && next.atMs <= now) {
      plugs.shift();
      active = { plug: next, battery: pluggedBattery(next.battery) };
      updateStatus();
      if (next.idTag !== undefined) void authorizeAndStart(next.idTag);
    }
  };

  const integrate = (toMs: number): void => {
    while (now < toMs) {
      updatePlug();
      const events = [toMs, (Math.floor(now / hourMs) + 1) * hourMs];
      if (plugs[0] && plugs[0].atMs > now) events.push(plugs[0].atMs);
      if (active?.plug.untilMs !== undefined) events.push(active.plug.untilMs);
      if (tx && intKey('MeterValueSampleInterval') > 0) events.push(tx.nextSampleMs);
      if (intKey('HeartbeatInterval') > 0) events.push(lastSentMs + intKey('HeartbeatInterval') * 1000);
      const change = nextProfileChangeMs(profiles, now);
      if (change !== undefined) events.push(change);
      const p = powerW();
      if (active && p > 0) events.push(now + active.battery.msToFull(p));
      const stepEnd = Math.max(now + 1, Math.min(...events));
      const kwh = (p * (stepEnd - now)) / 3_600_000_000;
      if (active && kwh > 0) active.battery.charge(Math.min(kwh, active.battery.acKwhToFull()));
      totalWh += kwh * 1000;
      const hour = Math.floor(now / hourMs) * hourMs;
      hours.set(hour, (hours.get(hour) ?? 0) + kwh);
      now = stepEnd;
      updateStatus();
      if (tx && intKey('MeterValueSampleInterval') > 0 && now >= tx.nextSampleMs) {
        tx.nextSampleMs = now + intKey('MeterValueSampleInterval') * 1000;
        void sendMeterValues();
      }
      if (intKey('HeartbeatInterval') > 0 && now - lastSentMs >= intKey('HeartbeatInterval') * 1000) void send('Heartbeat', {});
    }
    updatePlug();
  };

  const boot = async (): Promise<void> => {
    const answer = (await send('BootNotification', { chargePointVendor: 'wattshift-sim', chargePointModel: 'ocpp16-sim' })) as
      { status?: string; interval?: number } | undefined;
    if (answer?.status !== 'Accepted') return;
    booted = true;
    if (answer.interval !== undefined && answer.interval > 0) config.HeartbeatInterval = String(answer.interval);
    persist();
    await sendStatus(0, 'Available');
    await sendStatus(1, status);
    presentOfflineTag();
  };
  /** A card presented while offline, for the car still plugged in. */
  const presentOfflineTag = (): void => {
    if (offlineTag !== undefined && active && !tx) void authorizeAndStart(offlineTag);
    else offlineTag = undefined;
  };

  client.handle(({ method = '' }) => {
    received.push(method);
    throw createRPCError('NotImplemented', `${method} is not implemented`);
  });
  const handle = (method: string, fn: (params: Record<string, unknown>) => unknown): void =>
    client.handle(method, async ({ params }) => {
      received.push(method);
      // A charger whose own settings forbid it (e.g. local load management locked) answers Rejected.
      if (refusing.has(method)) return { status: 'Rejected' };
      return fn(params ?? {}) as Record<string, unknown>;
    });
  const after = (fn: () => unknown): void => void setImmediate(() => void fn());

  handle('ChangeConfiguration', ({ key, value }) => {
    const k = String(key);
    if (k in readOnlyKeys) return { status: 'Rejected' };
    const valid = writableKeys[k];
    if (!valid) return { status: 'NotSupported' };
    if (!valid(String(value))) return { status: 'Rejected' };
    config[k] = String(value);
    persist();
    return { status: 'Accepted' };
  });
  handle('GetConfiguration', ({ key }) => {
    const all: Record<string, string> = { ...config, ...readOnlyKeys };
    const keys = Array.isArray(key) && key.length > 0 ? (key as string[]) : Object.keys(all);
    return {
      configurationKey: keys.filter((k) => k in all).map((k) => ({ key: k, readonly: k in readOnlyKeys, value: all[k] })),
      unknownKey: keys.filter((k) => !(k in all)),
    };
  });
  handle('SetChargingProfile', ({ connectorId, csChargingProfiles }) => {
    const p = csChargingProfiles as ChargingProfile;
    const c = Number(connectorId);
    if (p.chargingSchedule.chargingRateUnit !== 'A' || c > 1) return { status: 'Rejected' };
    if (p.chargingProfilePurpose === 'TxProfile' && (c !== 1 || !tx || (p.transactionId !== undefined && p.transactionId !== tx.id)))
      return { status: 'Rejected' };
    if (p.chargingProfilePurpose === 'ChargePointMaxProfile' && c !== 0) return { status: 'Rejected' };
    // §5.16: a profile with the same id, or the same stack level and purpose, is replaced.
    profiles = profiles.filter(
      (s) =>
        s.profile.chargingProfileId !== p.chargingProfileId &&
        !(s.connectorId === c && s.profile.stackLevel === p.stackLevel && s.profile.chargingProfilePurpose === p.chargingProfilePurpose),
    );
    profiles.push({ connectorId: c, profile: p });
    persist();
    after(updateStatus);
    return { status: 'Accepted' };
  });
  handle('ClearChargingProfile', ({ id, connectorId, chargingProfilePurpose, stackLevel }) => {
    const before = profiles.length;
    profiles = profiles.filter(
      (s) =>
        !(
          (id === undefined || s.profile.chargingProfileId === id) &&
          (connectorId === undefined || s.connectorId === connectorId) &&
          (chargingProfilePurpose === undefined || s.profile.chargingProfilePurpose === chargingProfilePurpose) &&
          (stackLevel === undefined || s.profile.stackLevel === stackLevel)
        ),
    );
    persist();
    after(updateStatus);
    return { status: profiles.length < before ? 'Accepted' : 'Unknown' };
  });
  handle('RemoteStartTransaction', ({ idTag, chargingProfile }) => {
    if (!active || tx) return { status: 'Rejected' };
    after(() => startTransaction(String(idTag), chargingProfile as ChargingProfile | undefined));
    return { status: 'Accepted' };
  });
  handle('RemoteStopTransaction', ({ transactionId }) => {
    if (!tx || tx.id !== transactionId) return { status: 'Rejected' };
    after(() => stopTransaction('Remote'));
    return { status: 'Accepted' };
  });
  handle('TriggerMessage', ({ requestedMessage }) => {
    const run: Record<string, () => unknown> = {
      BootNotification: boot,
      Heartbeat: () => send('Heartbeat', {}),
      MeterValues: sendMeterValues,
      StatusNotification: () => Promise.all([sendStatus(0, 'Available'), sendStatus(1, status)]),
    };
    const fn = run[String(requestedMessage)];
    if (!fn) return { status: 'NotImplemented' };
    after(fn);
    return { status: 'Accepted' };
  });
  client.on('open', () => {
    if (!booted) void boot();
    else presentOfflineTag();
  });

  return {
    get nowMs() {
      return now;
    },
    get status() {
      return status;
    },
    get offeredA() {
      return tx ? offeredA() : 0;
    },
    get powerW() {
      return powerW();
    },
    /** The phases it charges on now. */
    get phasesNow() {
      return phasesNow();
    },
    get totalWh() {
      return totalWh;
    },
    get transactionId() {
      return tx?.id;
    },
    get battery() {
      return active?.battery;
    },
    get connected() {
      return client.state === RPCClient.OPEN;
    },
    /** The value of a configuration key. */
    config: (key: string): string | undefined => config[key],
    /** The requests the central system sent, by method, in order. */
    received: (): readonly string[] => received,
    profiles: (): readonly StoredProfile[] => profiles,
    /** Answers these requests (ones with a `status` answer) Rejected from now on; [] to stop. */
    refuse(methods: readonly string[]): void {
      refusing.clear();
      for (const m of methods) refusing.add(m);
    },
    async start(): Promise<void> {
      updatePlug();
      await client.connect();
    },
    /** Waits until every message so far has been sent and answered. */
    async settle(): Promise<void> {
      // A call in flight when the connection drops stays pending until ocpp-rpc gives it up.
      do {
        await new Promise((r) => setImmediate(r));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([Promise.all(pending), new Promise((r) => (timer = setTimeout(r, 20)))]);
        clearTimeout(timer);
        await new Promise((r) => setImmediate(r));
      } while (pending.size > 0 && client.state === RPCClient.OPEN);
    },
    async advance(ms: number): Promise<void> {
      integrate(now + ms);
      await this.settle();
    },
    energyKwhByHour: () => new Map(hours),
    async close(): Promise<void> {
      await client.close({ force: true });
    },
  };
}

export type OcppChargePointSim = ReturnType<typeof createOcppChargePointSim>;
