/**
 * Composition root: builds every part of the daemon from the config, wires the jobs together and
 * starts and stops them in order. Nothing else in the tree constructs adapters.
 */
import type { Config } from './config/schema.js';
import type { Clock } from './ports.js';
import type { Logger } from './log.js';
import type { Plan } from './core/types.js';
import type { HomeView, JobHealthView } from './ha/view.js';
import type { Store } from './store/types.js';
import { systemClock } from './clock.js';
import { WattshiftError, isWattshiftError } from './errors.js';
import { openStoreRecovering } from './store/recover.js';
import { createUpstream, type Upstream } from './upstream/index.js';
import { createMqttConnection, type MqttConnection } from './devices/mqtt/index.js';
import { createModbusBuses, type ModbusBus } from './devices/modbus/bus.js';
import { buildDevice, type BuiltDevice } from './devices/factory.js';
import { startHeartbeats } from './jobs/heartbeats.js';
import { startCentralSystem } from './devices/ocpp/start.js';
import type { CentralSystem } from './devices/ocpp/central-system.js';
import { superviseDevice, type SupervisedDevice } from './devices/supervisor.js';
import { startPlanWorker, type PlanWorker } from './jobs/plan-worker.js';
import { createHaBridge, type HaBridge } from './ha/bridge.js';
import { haWill } from './ha/publisher.js';
import { sharedConnectionPort } from './ha/port.js';
import { startStatusServer, type StatusServer } from './status/server.js';
import { cachedEnergyHistory, readEnergyHistory } from './status/history.js';
import { nightlyStoreCheck } from './jobs/nightly-check.js';
import { allowedPageHosts, statusPageUrl } from './status/page-url.js';
import { homeView } from './app-view.js';
import { identityOf, loadRegistration } from './identity.js';
import { createMetering, meterSubjectOf, meteringOptionsFor, type MeteredSubject, type Metering } from './jobs/metering.js';
import { Wishes } from './jobs/home-state.js';
import { createEventIntake } from './jobs/event-intake.js';
import { createEventActions, homeEventOf } from './jobs/event-actions.js';
import { startPriceRefresh, type PriceData } from './jobs/price-refresh.js';
import { createNordPoolClient } from './prices/nordpool-client.js';
import { buildPlanInput } from './jobs/plan-inputs.js';
import { clockStepOf, startPlanning } from './jobs/planning.js';
import { billPlanner } from './jobs/bill-planner.js';
import { createBilling, type BillSummary } from './jobs/billing.js';
import { siteTariff } from './config/tariff-file.js';
import { startControlLoop, type ControlSnapshot, type ControlledDevice } from './jobs/control-loop.js';
import { createFuseGuard } from './jobs/fuse-guard.js';
import { startReportOutbox } from './jobs/report-outbox.js';
import { startLoop, type LoopHandle } from './jobs/loop.js';
import { startCronJob } from './jobs/cron.js';
import { createHomeTracker } from './jobs/home-tracker.js';
import { DaemonMetrics } from './status/metrics.js';
import { packageVersion } from './package-root.js';
import { CommandGovernor, checkCommandLimits } from './jobs/command-envelope.js';
import type { HomeEvent, Identity } from './jobs/event-normalise.js';

export interface AppDeps {
  logger: Logger;
  clock?: Clock;
  /** Directory relative device-profile paths resolve against. */
  configDir?: string;
  /** Control loop period, ms of clock time (default 10 s). */
  controlTickMs?: number;
  /** Called after every control tick (the demo prints from it). */
  onControlTick?: (snapshot: ControlSnapshot) => void;
  /**
   * Deadline of one device read or command, ms of clock time (default 5 s). On an accelerated clock
   * pass a value that is still a sane real-time budget (e.g. 2 s × speed).
   */
  deviceTimeoutMs?: number;
  /** Checks the credentials at start (default true): rejected ones stop the start with AUTH_REJECTED. */
  checkCredentials?: boolean;
  /** Plans on a worker thread, off the control loop's event loop (`run` and the demo do; default false). */
  planInWorker?: boolean;
}

export interface App {
  start(): Promise<void>;
  stop(): Promise<void>;
  view(): HomeView;
  currentPlan(): Plan | null;
  readonly store: Store;
  /** Runs the event scan now (tests). */
  scanEvents(): void;
}

const leaseMs = 10 * 60_000;
/** Retention runs at night, local time, when the home is quiet (clear of the DST change hour in Europe). */
const nightlyPruneCron = '30 3 * * *';
/** Commands within this much clock time of the first one share one re-plan. */
const commandReplanDelayMs = 10_000;

/** Builds the daemon. Nothing connects before `start()`. */
export function buildApp(config: Config, deps: AppDeps): App {
  const log = deps.logger.child({ component: 'app' });
  const clock = deps.clock ?? systemClock;
  const slotMs = config.site.slotMinutes * 60_000;
  let store: Store | undefined;
  let upstream: Upstream | undefined;
  let mqtt: MqttConnection | null = null;
  let buses = new Map<string, ModbusBus>();
  let ocpp: CentralSystem | null = null;
  const built = new Map<string, BuiltDevice>();
  const supervised = new Map<string, SupervisedDevice>();
  let metering: Metering | undefined;
  let status: StatusServer | undefined;
  let ha: HaBridge | undefined;
  const loops: { name: string; handle: LoopHandle }[] = [];
  let controlLast: () => ControlSnapshot | null = () => null;
  const stopping = new AbortController();
  let planWorker: PlanWorker | undefined;
  let planCurrent: () => Plan | null = () => null;
  let jobHealth: () => JobHealthView[] = () => [];
  let scan: () => void = () => undefined;
  let eventsNow: () => HomeEvent[] = () => [];
  let billNow: () => BillSummary | null = () => null;
  let wishes: Wishes | undefined;
  const counters = new DaemonMetrics({ version: packageVersion() });
  /** The last event the store could not take (cleared when one is stored again), for health. */
  let storeFailure: { code: string; message: string; atMs: number } | null = null;
  /** A damaged database replaced at start (shown, not failing) or found by the nightly check (failing). */
  let storeCorrupt: { code: string; message: string; atMs: number; failing?: boolean } | null = null;

  // Best-effort writes of small state: a store failure (disk full) is logged once per kind and
  // never stops control, planning or pricing.
  const storeFaults = new Set<string>();
  function guardStore<T>(what: string, write: () => T): T | undefined {
    try {
      const result = write();
      if (storeFaults.delete(what)) log.info({ what }, 'state writes work again');
      return result;
    } catch (err) {
      if (!storeFaults.has(what)) log.warn({ code: isWattshiftError(err) ? err.code : 'STORE_FAILED', what, err }, 'state not stored; going on');
      storeFaults.add(what);
      return undefined;
    }
  }

  /** The store's health: failing while writes fail or corruption was found, else showing a past recovery. */
  function storeHealth(): JobHealthView {
    const faults = storeFaults.size > 0 ? { code: 'STORE_FAILED', message: `not stored: ${[...storeFaults].join(', ')}`, atMs: clock.nowMs() } : null;
    const corrupt = storeCorrupt ? { code: storeCorrupt.code, message: storeCorrupt.message, atMs: storeCorrupt.atMs } : null;
    const shown = storeFailure ?? faults ?? corrupt;
    return {
      name: 'store',
      ok: storeFailure === null && faults === null && storeCorrupt?.failing !== true,
      ...(shown ? { lastError: shown } : {}),
    };
  }

  const need = <T>(x: T | undefined, what: string): T => {
    if (x === undefined) throw new WattshiftError('INTERNAL', `${what} used before start()`);
    return x;
  };

  // The ids this home has at the API: read once at start (`wattshift register` runs before the
  // service starts; a restart picks up a new registration).
  let me: Identity = identityOf(config, undefined);

  function view(): HomeView {
    const s = need(store, 'store');
    return homeView({
      config,
      nowMs: clock.nowMs(),
      plan: planCurrent(),
      control: controlLast(),
      devices: supervised,
      wishes: (id) => need(wishes, 'wishes').get(id),
      jobs: jobHealth(),
      outbox: s.outboxSummary(),
      locationId: me.locationId ?? 'home',
      events: eventsNow(),
      resources: me.resources,
      bill: billNow(),
    });
  }

  async function start(): Promise<void> {
    const opened = openStoreRecovering({ path: config.storage.path, logger: deps.logger, clock });
    const openCheckedMs = clock.nowMs();
    const s = opened.store;
    store = s;
    if (opened.recovery) {
      const r = opened.recovery;
      storeCorrupt = { code: 'STORE_CORRUPT', message: `a damaged database was moved to ${r.movedTo} and a new one created; run \`wattshift register\` again`, atMs: r.atMs };
    }
    if (s.interruptedAtOpen.length > 0) log.warn({ reports: s.interruptedAtOpen.length }, 'reports interrupted by the last stop will be resent');
    me = identityOf(config, loadRegistration(s));
    const identity = (): Identity => me;

    // Events, prices and report uploads: the API itself or the partner's hub (src/upstream/).
    const up = createUpstream(config, { clock, logger: deps.logger, checkCredentials: deps.checkCredentials !== false });
    upstream = up;
    await up.open();
    const checkEligibility = (): void => {
      if (up.eligibility) void tracker.checkEligibility(up.eligibility, me, deps.logger);
    };

    if (config.mqtt) {
      const m = config.mqtt;
      mqtt = createMqttConnection(
        {
          url: m.url,
          clientId: m.clientId,
          rejectUnauthorized: m.rejectUnauthorized,
          will: haWill(m.baseTopic),
          maxPacketBytes: m.maxPacketBytes,
          onOversized: (p) => {
            counters.refused('mqtt', 'MQTT_MESSAGE_TOO_LARGE');
            if (p.topic !== undefined) ha?.clearOversizedCommand(p.topic);
          },
          ...(m.username ? { username: m.username } : {}),
          ...(m.password ? { password: m.password } : {}),
          ...(m.ca ? { caFile: m.ca } : {}),
          ...(m.cert ? { certFile: m.cert } : {}),
          ...(m.key ? { keyFile: m.key } : {}),
        },
        { logger: deps.logger },
      );
    }
    buses = createModbusBuses(config.modbus, { clock, logger: deps.logger });
    if (config.ocpp) ocpp = await startCentralSystem(config, { clock, logger: deps.logger, ...(deps.deviceTimeoutMs !== undefined ? { requestTimeoutMs: deps.deviceTimeoutMs } : {}) });
    // Devices on MQTT would start in their safe state if the first tick ran before the broker answered.
    await mqtt?.waitConnected(AbortSignal.timeout(5_000)).catch((err: unknown) => {
      if (isWattshiftError(err, 'MQTT_AUTH_REJECTED')) throw err;
      log.warn({ code: isWattshiftError(err) ? err.code : 'MQTT_UNAVAILABLE' }, 'MQTT broker not reachable at start; retrying in the background');
    });

    for (const d of config.devices) {
      const b = buildDevice(d, {
        buses, mqtt, ocpp, clock, logger: deps.logger,
        requestTimeoutMs: deps.deviceTimeoutMs ?? 5_000,
        ...(deps.configDir ? { baseDir: deps.configDir } : {}),
      });
      built.set(d.id, b);
      supervised.set(
        d.id,
        superviseDevice(
          { id: d.id, kind: d.kind, capabilities: b.capabilities, leaseMs, readTimeoutMs: deps.deviceTimeoutMs ?? 5_000, ...(d.kind === 'evCharger' ? { safeCurrentA: d.safeCurrentA } : {}) },
          { clock, logger: deps.logger },
        ),
      );
    }
    const heartbeats = startHeartbeats(
      [...built].flatMap(([device, b]) => b.heartbeats.map((heartbeat) => ({ device, heartbeat }))),
      { clock, logger: deps.logger },
    );
    if (heartbeats) loops.push({ name: 'heartbeats', handle: heartbeats });
    const mainMeterId = config.devices.find((d) => d.kind === 'meter' && d.model.main)?.id ?? null;
    const subjectOfDevice = meterSubjectOf(config.devices);
    const subjects: MeteredSubject[] = config.devices.flatMap((d): MeteredSubject[] => {
      const caps = built.get(d.id)!.capabilities;
      if (caps.energyMeter) return [{ subject: subjectOfDevice(d.id), method: 'counter', options: meteringOptionsFor(d, config.site) }];
      if (caps.powerMeter) return [{ subject: subjectOfDevice(d.id), method: 'power' }];
      return [];
    });
    const meter = createMetering({ store: s, subjects, clock, logger: deps.logger });
    metering = meter;
    const w = new Wishes(s, config.devices.map((d) => d.id));
    wishes = w;
    const tracker = createHomeTracker({ config, store: s, clock, wishes: w });

    // Events → actions → planning.
    // Jobs that call each other are created in order; callbacks reach later ones through `late`.
    const late: {
      planning?: ReturnType<typeof startPlanning>;
      outbox?: ReturnType<typeof startReportOutbox>;
      prices?: ReturnType<typeof startPriceRefresh>;
    } = {};
    // The events that shape prices and caps, read from the store when they may have changed (a
    // new event, a scan) or every few minutes as time moves on, not on every control tick.
    let eventsCache: { atMs: number; events: HomeEvent[] } | null = null;
    const activeEvents = (): HomeEvent[] => {
      const now = clock.nowMs();
      if (eventsCache && now >= eventsCache.atMs && now - eventsCache.atMs < 5 * 60_000) return eventsCache.events;
      const events = s
        .listEvents({ fromMs: now - slotMs, toMs: now + 8 * 86_400_000, states: ['received', 'active', 'reportQueued'] })
        .flatMap((row) => {
          const e = homeEventOf(row, me);
          return e && e.relevant ? [e] : [];
        });
      eventsCache = { atMs: now, events };
      return withUnstored(events);
    };
    eventsNow = activeEvents;
    const eventsChanged = (): void => {
      eventsCache = null;
    };
    // Events the store could not take: their caps and prices hold from memory until they end.
    const unstored = new Map<string, HomeEvent>();
    const withUnstored = (events: HomeEvent[]): HomeEvent[] => {
      if (unstored.size === 0) return events;
      const now = clock.nowMs();
      for (const [id, e] of unstored) if (e.endMs !== null && e.endMs < now - slotMs) unstored.delete(id);
      const stored = new Set(events.map((e) => e.id));
      return [...events, ...[...unstored.values()].filter((e) => !stored.has(e.id))];
    };
    const actions = createEventActions({
      store: s,
      identity,
      subjectOf: (t) => {
        if (t.kind === 'location') return mainMeterId ? 'location' : null;
        const deviceId = me.resources.get(t.resourceId);
        return deviceId ? subjectOfDevice(deviceId) : null;
      },
      canHold: (t, e) => {
        if (t.kind === 'resource') {
          const deviceId = me.resources.get(t.resourceId);
          return deviceId !== undefined && supervised.get(deviceId)?.health().state === 'up';
        }
        const caps = e.lpcCaps.filter((c) => c.resourceId === null);
        return caps.every((c) => tracker.baseLoadKw() <= c.maxKw);
      },
      clock,
      logger: deps.logger,
      onQueued: () => late.outbox?.flush(),
    });
    scan = () => {
      actions.scan();
      eventsChanged();
    };
    const intake = createEventIntake({
      store: s,
      identity,
      clock,
      logger: deps.logger,
      onEvent: (e, stored) => {
        if (!stored) {
          unstored.set(e.id, e);
          storeFailure = { code: 'STORE_FAILED', message: `event ${e.id} could not be stored; held in memory`, atMs: clock.nowMs() };
        } else {
          unstored.delete(e.id);
          storeFailure = null;
          actions.handle(e);
        }
        eventsChanged();
        if (e.priceDeltas.length > 0) late.prices?.wake();
        if (e.eligibility) checkEligibility();
        late.planning?.request(`event ${e.payloadType}`);
      },
      onRefused: () => counters.refused('event', 'EVENT_OUT_OF_RANGE'),
    });

    const savedPrices = tracker.loadPrices();
    const prices = startPriceRefresh({
      source: up.prices,
      area: config.site.priceArea,
      currency: config.site.currency,
      clock,
      logger: deps.logger,
      horizonMs: config.planner.horizonHours * 3_600_000,
      ...(savedPrices ? { initial: savedPrices } : {}),
      ...(config.prices.nordPool.enabled
        ? { nordPool: { client: createNordPoolClient(config.prices.nordPool), resolutionMinutes: config.site.slotMinutes } }
        : {}),
      onChange: (data: PriceData) => {
        late.planning?.request('prices');
        // Kept for a restart only: a full disk must not stop prices reaching the planner.
        guardStore('prices', () => tracker.savePrices(data));
      },
    });
    late.prices = prices;
    loops.push({ name: 'prices', handle: prices });

    // The realised bill: closed hours priced a few minutes after metering writes them.
    const billing = createBilling({
      config,
      store: s,
      subjects: subjects.map((m) => m.subject),
      prices: () => prices.data(),
      events: (fromMs, toMs) => s
        .listEvents({ fromMs, toMs, states: ['received', 'active', 'reportQueued', 'done', 'failed'] })
        .flatMap((row) => {
          const e = homeEventOf(row, me);
          return e && e.relevant ? [e] : [];
        }),
      logger: deps.logger,
    });
    billNow = () => billing.summary();
    const billingLoop = startLoop({
      name: 'billing', clock, logger: log, errorDelayMs: 5 * 60_000,
      tick: async () => {
        billing.tick(clock.nowMs());
        return 5 * 60_000;
      },
    });
    loops.push({ name: 'billing', handle: billingLoop });

    const previous = tracker.loadPlan();
    const planBill = billPlanner({ config, readLocationHours: (from, to) => s.readHourly('location', from, to), logger: deps.logger });
    // The planner thread plans energy only, so a tariff with a capacity fee keeps the planner on this
    // thread. It ends after two minutes without a plan: an idle thread's memory is not worth keeping.
    if (deps.planInWorker && !siteTariff(config)?.capacity) planWorker = startPlanWorker({ logger: deps.logger, idle: { clock, ms: 2 * 60_000 } });
    const planning = startPlanning({
      buildInput: (now) => {
        // What the devices took in this slot so far, so that a mid-slot plan keeps the slot's target.
        const last = controlLast();
        const slotMs = config.site.slotMinutes * 60_000;
        const delivered = last && last.slotStartMs === Math.floor(now / slotMs) * slotMs ? last.slotEnergyKwh : undefined;
        const snap = tracker.snapshot(now, prices.data(), activeEvents());
        return buildPlanInput(config, delivered ? { ...snap, slotDeliveredKwh: delivered } : snap, me.resources);
      },
      plan: async (input, nowMs, previous) => {
        // Real time, not the clock: this is CPU spent (or waited for, with the worker), for /metrics.
        // `previous` carries the slot already under way: without it a re-plan would restart its target.
        const started = performance.now();
        const made = await (planWorker ? planWorker.plan(input, nowMs, previous) : planBill(input, nowMs, previous));
        counters.planSolved((performance.now() - started) / 1000);
        return made;
      },
      store: s,
      clock,
      logger: deps.logger,
      slotMinutes: config.site.slotMinutes,
      initial: previous,
      onPlan: () => void ha?.update().catch(() => undefined),
    });
    late.planning = planning;
    loops.push({ name: 'planner', handle: planning });
    planCurrent = () => planning.current();

    // One warning per step: until the re-plan lands, later ticks see the same step.
    let stepSeen = false;
    const controlled: ControlledDevice[] = config.devices
      .filter((d) => d.kind !== 'meter')
      .map((d) => ({ config: d, subject: subjectOfDevice(d.id), device: supervised.get(d.id)! }));
    const mainMeter = mainMeterId
      ? { config: config.devices.find((d) => d.id === mainMeterId)!, subject: 'location', device: supervised.get(mainMeterId)! }
      : null;
    const fuseConfig = config.site.fuse;
    const control = startControlLoop({
      devices: controlled,
      mainMeter,
      ...(fuseConfig
        ? { fuse: { guard: createFuseGuard(fuseConfig, deps.logger), meter: supervised.get(fuseConfig.meter)!, meterId: fuseConfig.meter } }
        : {}),
      metering: meter,
      clock,
      logger: deps.logger,
      tickMs: deps.controlTickMs ?? 10_000,
      slotMinutes: config.site.slotMinutes,
      inputs: {
        plan: () => planning.current(),
        locationCapKw: (now) => tracker.locationCapKw(now, activeEvents()),
        deviceCapKw: (id, now) => tracker.deviceCapKw(id, now, activeEvents(), me),
        intent: (id) => w.intent(id, clock.nowMs()),
        baseLoadKw: () => tracker.baseLoadKw(),
        estimatedTankC: (id, now) => tracker.estimatedTankC(id, now, planning.current()),
      },
      onTick: (snap) => {
        // The plan loaded from the store at start is old by design, not because the clock stepped.
        const current = planning.current();
        const step = current === previous ? null : clockStepOf(current, clock.nowMs(), slotMs);
        if (step !== null && !stepSeen) {
          log.warn({ code: 'CLOCK_JUMP', direction: step, planStartMs: planning.current()?.startMs }, 'the clock stepped under the plan: re-planning and refreshing prices now');
          eventsChanged();
          prices.wake();
          planning.request(`clock step ${step}`);
        }
        stepSeen = step !== null;
        if (guardStore('home state', () => tracker.observe(snap, planning.current()))) planning.request('device state changed');
        void ha?.update().catch(() => undefined);
        deps.onControlTick?.(snap);
      },
    });
    loops.push({ name: 'control', handle: control });
    controlLast = () => control.last();

    const outbox = startReportOutbox({
      outbox: s,
      sender: up.reports,
      clock,
      logger: deps.logger,
      backoff: { baseMs: config.reports.retryMinS * 1000, maxMs: config.reports.retryMaxS * 1000 },
      deadlineWarningMs: config.reports.deadlineWarnDays * 86_400_000,
      onOutcome: (outcome, code) => counters.report(outcome, code),
    });
    late.outbox = outbox;
    loops.push({ name: 'reports', handle: outbox });

    const events = await up.startEvents({
      intake,
      isKnownEvent: (id) => s.hasEvent(id),
      pricesChanged: () => prices.wake(),
      onRefused: (input, code) => counters.refused(input, code),
    });
    loops.push({ name: 'events', handle: events });

    // Maintenance: report scan every few minutes; quick_check and retention at start and nightly at 03:30 local (a node-cron job).
    const maintenance = startLoop({
      name: 'maintenance',
      clock,
      logger: log,
      errorDelayMs: 5 * 60_000,
      tick: async () => {
        scan();
        return 5 * 60_000;
      },
    });
    const days = config.storage.retentionDays;
    const prune = startCronJob({
      name: 'nightly-prune',
      spec: { cron: nightlyPruneCron, timezone: config.site.timezone },
      clock,
      logger: deps.logger,
      run: () => {
        const now = clock.nowMs();
        const outcome = guardStore('nightly prune', () => nightlyStoreCheck({
          store: s, nowMs: now, checkedRecently: now - openCheckedMs < 3_600_000, logger: deps.logger,
          retention: { hourlyDays: days, eventsDays: days, plansDays: 7 },
        }));
        if (outcome?.check === 'corrupt') {
          storeCorrupt = { code: 'STORE_CORRUPT', message: `quick_check failed (${outcome.messages.slice(0, 2).join('; ')}); restart the service to replace the database`, atMs: now, failing: true };
        }
      },
    });
    // Also once at start, so a daemon that is never up at night still keeps its retention.
    prune.wake();
    loops.push({ name: 'maintenance', handle: maintenance }, { name: 'nightly-prune', handle: prune });

    jobHealth = () => [
      { name: 'events', ...healthOf(up.health()) },
      { name: 'prices', ...healthOf(prices.health()) },
      { name: 'planner', ...healthOf(planning.health()) },
      { name: 'reports', ...healthOf(outbox.health()) },
      { name: 'metering', ...healthOf(meter.health()) },
      { name: 'billing', ...healthOf(billing.health()) },
      storeHealth(),
      ...[...supervised].map(([id, d]) => {
        const h = d.health();
        return { name: `device:${id}`, ok: h.state === 'up', ...(h.lastError ? { lastError: { ...h.lastError, atMs: h.sinceMs } } : {}) };
      }),
    ];

    if (mqtt && config.mqtt) {
      const m = config.mqtt;
      const governor = new CommandGovernor();
      // A burst of commands makes one re-plan, a few seconds after its first command.
      let replanQueued = false;
      const replanSoon = (reason: string): void => {
        if (replanQueued) return;
        replanQueued = true;
        void clock.sleep(commandReplanDelayMs, stopping.signal).then(
          () => planning.request(reason),
          () => undefined,
        ).finally(() => (replanQueued = false));
      };
      const pageUrl = statusPageUrl(config.http);
      const bridge = createHaBridge({
        port: sharedConnectionPort(mqtt),
        baseTopic: m.baseTopic,
        discovery: m.discovery,
        currency: config.site.currency,
        swVersion: packageVersion(),
        ...(pageUrl ? { configurationUrl: pageUrl } : {}),
        logger: deps.logger,
        getView: view,
        onCommand: async (cmd) => {
          const device = config.devices.find((d) => d.id === cmd.deviceId);
          if (!device) throw new WattshiftError('MQTT_COMMAND_INVALID', `unknown device '${cmd.deviceId}'`);
          const now = clock.nowMs();
          checkCommandLimits(cmd, device, now);
          governor.admit(cmd, device, w.intent(cmd.deviceId, now).mode, now);
          w.apply(cmd, now);
          replanSoon(`command for ${cmd.deviceId}`);
          control.wake();
        },
        onRefused: (code) => counters.refused('command', code),
        onCommandOutcome: (ok) => counters.command(ok),
        previousDeviceIds: tracker.announcedDevices(),
        saveDeviceIds: (ids) => tracker.saveAnnouncedDevices(ids),
      });
      ha = bridge;
      let started = false;
      const announce = (): void => {
        const first = !started;
        started = true;
        void (first ? bridge.start() : bridge.resync()).catch((err) => log.warn({ err, code: 'MQTT_UNAVAILABLE' }, 'home automation not announced'));
      };
      mqtt.onState((state) => {
        if (state === 'up') announce();
      });
      if (mqtt.connected) announce();
    }
    if (config.http.enabled) {
      status = await startStatusServer({
        host: config.http.host,
        port: config.http.port,
        getView: view,
        getHistory: cachedEnergyHistory((nowMs) => readEnergyHistory(s, config, nowMs)),
        metrics: counters,
        timezone: config.site.timezone,
        logger: deps.logger,
        allowedHosts: allowedPageHosts(config.http),
      });
      log.info({ url: status.url }, 'status page');
    }
    // Eligibility can change while the daemon was down; look once at start, then on each event.
    checkEligibility();
    log.info({ devices: config.devices.length, slotMinutes: config.site.slotMinutes }, 'wattshift started');
  }

  async function stop(): Promise<void> {
    stopping.abort();
    // Every loop is told at once, so none starts new work (a plan, a report) while another is
    // still finishing its tick; devices are released only after all ticks have ended.
    await Promise.all(loops.map(({ name, handle }) => handle.stop().catch((err) => log.warn({ err, loop: name }, 'loop did not stop cleanly'))));
    for (const d of supervised.values()) await d.stop().catch(() => undefined);
    await planWorker?.close().catch(() => undefined);
    try {
      metering?.flush();
    } catch (err) {
      log.warn({ err }, 'final metering flush failed');
    }
    await status?.close();
    await ha?.stop().catch(() => undefined);
    for (const b of built.values()) b.close();
    for (const b of buses.values()) await b.close().catch(() => undefined);
    await mqtt?.close().catch(() => undefined);
    await ocpp?.close().catch(() => undefined);
    await upstream?.close().catch(() => undefined);
    store?.close();
    log.info('wattshift stopped');
  }

  return {
    start,
    stop,
    view,
    currentPlan: () => planCurrent(),
    get store() {
      return need(store, 'store');
    },
    scanEvents: () => scan(),
  };
}

function healthOf(h: { ok: boolean; lastError?: { code: string; message: string; atMs: number } | null } | undefined): Omit<JobHealthView, 'name'> {
  if (!h) return { ok: true };
  return { ok: h.ok, ...(h.lastError ? { lastError: h.lastError } : {}) };
}
