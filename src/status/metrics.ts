/**
 * `/metrics` with prom-client: Node's default process metrics (memory, CPU, handles, GC,
 * event-loop lag), `wattshift_build_info`, counters of what happened since start, and gauges read
 * from the live view at each scrape. Units are base units (seconds, watts, joules).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BillView, HomeView } from '../view/model.js';

const joulesPerKwh = 3_600_000;

export interface MetricsOptions {
  version: string;
  /** Node's process metrics and event-loop lag (default true; tests may turn them off). */
  processMetrics?: boolean;
}

type Labels = Record<string, string>;

export class DaemonMetrics {
  readonly registry = new Registry();
  readonly contentType: string;
  private readonly requestErrors: Counter;
  private readonly commands: Counter;
  private readonly reports: Counter;
  private readonly refusedInputs: Counter;
  private readonly solve: Histogram;
  private readonly gauges = new Map<string, { gauge: Gauge; labelled: boolean }>();
  private readonly energy: Counter;

  constructor(options: MetricsOptions) {
    const r = this.registry;
    this.contentType = r.contentType;
    if (options.processMetrics !== false) collectDefaultMetrics({ register: r });
    new Gauge({
      name: 'wattshift_build_info',
      help: 'Version of wattshift and Node.js; always 1.',
      labelNames: ['version', 'node'],
      registers: [r],
    }).set({ version: options.version, node: process.versions.node }, 1);
    this.requestErrors = new Counter({
      name: 'wattshift_request_errors_total',
      help: 'Failed outgoing requests by target and error code.',
      labelNames: ['target', 'code'],
      registers: [r],
    });
    this.commands = new Counter({
      name: 'wattshift_commands_total',
      help: 'MQTT commands by outcome (error: rejected, nothing changed).',
      labelNames: ['status'],
      registers: [r],
    });
    this.reports = new Counter({
      name: 'wattshift_reports_total',
      help: 'Usage report attempts by outcome.',
      labelNames: ['status'],
      registers: [r],
    });
    this.refusedInputs = new Counter({
      name: 'wattshift_refused_inputs_total',
      help: 'Webhook calls, MQTT messages, commands and events refused, by source and error code.',
      labelNames: ['input', 'code'],
      registers: [r],
    });
    for (const status of ['ok', 'error']) this.commands.inc({ status }, 0);
    for (const status of ['sent', 'rejected', 'retried']) this.reports.inc({ status }, 0);
    this.solve = new Histogram({
      name: 'wattshift_plan_solve_seconds',
      help: 'Time the planner took for one plan.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [r],
    });
    this.energy = new Counter({
      name: 'wattshift_device_energy_joules_total',
      help: 'Cumulative energy counter of a device (its meter).',
      labelNames: ['device', 'kind'],
      registers: [r],
    });
  }

  requestError(target: string, code: string): void {
    this.requestErrors.inc({ target, code });
  }

  command(ok: boolean): void {
    this.commands.inc({ status: ok ? 'ok' : 'error' });
  }

  /** Hostile or out-of-range input refused: a webhook call, an MQTT message, a command, an event. */
  refused(input: 'webhook' | 'mqtt' | 'command' | 'event', code: string): void {
    this.refusedInputs.inc({ input, code });
  }

  report(outcome: 'sent' | 'rejected' | 'retried', code?: string): void {
    this.reports.inc({ status: outcome });
    if (code) this.requestError('api', code);
  }

  planSolved(seconds: number): void {
    this.solve.observe(seconds);
  }

  /** The exposition text for this view. */
  async render(view: HomeView): Promise<string> {
    // An unknown value is left out, not shown as 0: an unlabelled gauge loses its default sample.
    for (const { gauge, labelled } of this.gauges.values()) {
      gauge.reset();
      if (!labelled) gauge.remove({});
    }
    this.energy.reset();
    this.setGauges(view);
    for (const d of view.devices) {
      if (d.energyKwh !== undefined && Number.isFinite(d.energyKwh) && d.energyKwh >= 0)
        this.energy.inc({ device: d.id, kind: d.kind }, d.energyKwh * joulesPerKwh);
    }
    return this.registry.metrics();
  }

  private gauge(name: string, help: string, labelNames: string[] = []): (value: number | undefined, labels?: Labels) => void {
    let entry = this.gauges.get(name);
    if (!entry) {
      entry = { gauge: new Gauge({ name, help, labelNames, registers: [this.registry] }), labelled: labelNames.length > 0 };
      this.gauges.set(name, entry);
    }
    const { gauge } = entry;
    return (value, labels = {}) => {
      if (value !== undefined && Number.isFinite(value)) gauge.set(labels, value);
    };
  }

  private setGauges(view: HomeView): void {
    const plan = view.plan;
    if (plan) {
      const cur = { currency: plan.currency };
      this.gauge('wattshift_plan_expected_cost', 'Expected cost of the current plan over its horizon.', ['currency'])(plan.expectedCost, cur);
      this.gauge('wattshift_plan_baseline_cost', 'Cost of the same energy without shifting.', ['currency'])(plan.baselineCost, cur);
      this.gauge('wattshift_plan_savings', 'Baseline cost minus expected cost.', ['currency'])(plan.baselineCost - plan.expectedCost, cur);
      this.gauge('wattshift_plan_incentive', 'Incentive earned by the plan.', ['currency'])(plan.incentive, cur);
      this.gauge('wattshift_plan_shortfalls', 'Targets the plan cannot meet.')(plan.shortfalls.length);
      this.gauge('wattshift_plan_slots', 'Slots in the current plan.')(plan.slots.length);
      this.gauge('wattshift_plan_age_seconds', 'Time since the planner made the plan the daemon follows.')((view.nowMs - plan.createdMs) / 1000);
    }
    if (view.price) {
      const p = view.price;
      const price = this.gauge('wattshift_price_per_kwh', 'Current electricity price per kWh by component.', ['currency', 'component']);
      price(p.totalPerKwh, { currency: p.currency, component: 'total' });
      price(p.spotPerKwh ?? undefined, { currency: p.currency, component: 'spot' });
      price(p.deltaPerKwh, { currency: p.currency, component: 'delta' });
    }
    if (view.bill) this.setBillGauges(view.bill);
    const loc = view.location;
    this.gauge('wattshift_location_power_watts', 'Location active power.')(loc.powerW);
    this.gauge('wattshift_location_power_limit_watts', 'Location power limit.')(loc.limitKw * 1000);
    this.gauge(
      'wattshift_location_lpc_cap_watts',
      'Active power-limitation (LPC) cap on the location.',
    )(loc.lpcCapKw === undefined ? undefined : loc.lpcCapKw * 1000);
    if (loc.fuse) {
      this.gauge('wattshift_fuse_amperes', 'The main fuse per line (site.fuse.mainFuseA).')(loc.fuse.mainFuseA);
      const headroom = this.gauge(
        'wattshift_fuse_headroom_amperes',
        'The main fuse less the measured current, per line; absent while a line is not measured.',
        ['line'],
      );
      loc.fuse.headroomA.forEach((a, i) => headroom(a ?? undefined, { line: `L${i + 1}` }));
      this.gauge('wattshift_fuse_limiting', '1 while the main fuse holds a charger below what it was asked for.')(loc.fuse.limiting ? 1 : 0);
    }
    const cap = this.gauge('wattshift_lpc_cap_watts', 'Active LPC caps by what they apply to (location or a device id).', ['applies_to', 'event']);
    const capEnd = this.gauge('wattshift_lpc_cap_end_timestamp_seconds', 'When each active LPC cap ends.', ['applies_to', 'event']);
    for (const l of view.limits.filter((x) => x.active)) {
      const labels = { applies_to: l.deviceId ?? 'location', event: l.eventId };
      cap(l.capKw * 1000, labels);
      capEnd(l.endMs / 1000, labels);
    }
    this.gauge('wattshift_events_applying', 'Events that apply now or later.')(view.events.length);
    const dev = (d: HomeView['devices'][number]): Labels => ({ device: d.id, kind: d.kind });
    const power = this.gauge('wattshift_device_power_watts', 'Active power of a device.', ['device', 'kind']);
    const temp = this.gauge('wattshift_device_temperature_celsius', 'Tank temperature.', ['device', 'kind']);
    const available = this.gauge('wattshift_device_available', '1 when the device answers.', ['device', 'kind']);
    const plannedOn = this.gauge('wattshift_device_planned_on', '1 when the plan has the device on now.', ['device', 'kind']);
    for (const d of view.devices) {
      power(d.powerW, dev(d));
      temp(d.temperatureC, dev(d));
      available(d.available ? 1 : 0, dev(d));
      plannedOn(d.plannedOn ? 1 : 0, dev(d));
    }
    this.gauge('wattshift_health_ok', '1 when every job is healthy.')(view.health.ok ? 1 : 0);
    const job = this.gauge('wattshift_job_ok', '1 when the job ran without error last time.', ['job']);
    const jobError = this.gauge('wattshift_job_last_error_timestamp_seconds', 'When the job last failed, by error code.', ['job', 'code']);
    for (const j of view.health.jobs) {
      job(j.ok ? 1 : 0, { job: j.name });
      if (j.lastError) jobError(j.lastError.atMs / 1000, { job: j.name, code: j.lastError.code });
    }
    const o = view.outbox;
    this.gauge('wattshift_outbox_pending', 'Reports waiting in the outbox (or being sent).')(o.pending);
    this.gauge('wattshift_outbox_rejected', 'Reports the API rejected.')(o.rejected);
    const byState = this.gauge('wattshift_outbox_reports', 'Usage reports in the outbox by state.', ['state']);
    byState(o.pending, { state: 'pending' });
    byState(o.accepted, { state: 'accepted' });
    byState(o.rejected, { state: 'rejected' });
    this.gauge(
      'wattshift_outbox_oldest_deadline_timestamp_seconds',
      'Deadline of the oldest pending report.',
    )(o.oldestDeadlineMs === undefined ? undefined : o.oldestDeadlineMs / 1000);
  }

  private setBillGauges(b: BillView): void {
    const bill = this.gauge(
      'wattshift_bill_month',
      "This month's bill so far at the main meter by component (total includes VAT and the capacity fee).",
      ['currency', 'component'],
    );
    const components = {
      total: b.total,
      energy: b.energy,
      grid_fee: b.gridFee,
      tax: b.tax,
      subsidy: b.subsidy,
      vat: b.vat,
      incentive: b.incentive,
      capacity: b.capacity?.fee,
    };
    for (const [component, v] of Object.entries(components)) bill(v, { currency: b.currency, component });
    this.gauge('wattshift_bill_month_baseline', 'What the same hours would have cost without wattshift (VAT and its capacity fee included).', [
      'currency',
    ])(b.baseline.total, { currency: b.currency });
    this.gauge('wattshift_bill_month_savings', 'Baseline minus realised bill this month so far.', ['currency'])(b.savings, { currency: b.currency });
    this.gauge('wattshift_bill_month_energy_kwh', 'Energy priced this month at the main meter.')(b.kwh);
    this.gauge('wattshift_bill_hours_unpriced', 'Metered hours this month without a known price (left out of the bill).')(b.hoursUnpriced);
    const device = this.gauge('wattshift_bill_month_device', 'What each metered device cost this month so far.', ['currency', 'device']);
    for (const d of b.devices) device(d.total, { currency: b.currency, device: d.id });
    this.gauge(
      'wattshift_capacity_measure_watts',
      "The month's capacity measure so far (mean of the billed peaks).",
    )(b.capacity ? b.capacity.measureKw * 1000 : undefined);
    const margin = b.capacity?.marginKw;
    this.gauge(
      'wattshift_capacity_margin_watts',
      'Room left before the next capacity step.',
    )(margin === null || margin === undefined ? undefined : margin * 1000);
  }
}
