import type { HomeView } from '../ha/view.js';

/**
 * Counters the daemon keeps (gauges come from the {@link HomeView}). Counts are totals since
 * the process started.
 */
export interface MetricsSnapshot {
  /** Failed outgoing requests by target (`api`, `forecast`, `token`, a device id, ...) and error code. */
  requestErrors: { target: string; code: string; count: number }[];
  /** Commands received over MQTT, by outcome. */
  commands?: { status: 'ok' | 'error'; count: number }[];
  /** Refused input by source (`webhook`, `mqtt`, `command`, `event`) and error code. */
  refused?: { input: string; code: string; count: number }[];
  /** Reports sent by outcome. */
  reports?: { status: 'sent' | 'rejected' | 'retried'; count: number }[];
}

export const emptyMetrics = (): MetricsSnapshot => ({ requestErrors: [] });

type Labels = Record<string, string>;
interface Family {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  samples: { labels: Labels; value: number }[];
}

/** Label values escape backslash, double quote and newline (exposition format 0.0.4). */
function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function renderFamily(f: Family): string {
  if (f.samples.length === 0) return '';
  const lines = [`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`];
  for (const s of f.samples) {
    const entries = Object.entries(s.labels);
    const labels = entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
    lines.push(`${f.name}${labels} ${formatValue(s.value)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The Prometheus text exposition (format 0.0.4) of a view and the counters. */
export function renderMetrics(view: HomeView, snapshot: MetricsSnapshot): string {
  const families: Family[] = [];
  const gauge = (name: string, help: string, samples: Family['samples']): void => {
    families.push({ name, help, type: 'gauge', samples });
  };
  const counter = (name: string, help: string, samples: Family['samples']): void => {
    families.push({ name, help, type: 'counter', samples });
  };
  const one = (value: number | undefined, labels: Labels = {}): Family['samples'] =>
    value === undefined || !Number.isFinite(value) ? [] : [{ labels, value }];

  const plan = view.plan;
  if (plan) {
    const cur = { currency: plan.currency };
    gauge('wattshift_plan_expected_cost', 'Expected cost of the current plan over its horizon.', one(plan.expectedCost, cur));
    gauge('wattshift_plan_baseline_cost', 'Cost of the same energy without shifting.', one(plan.baselineCost, cur));
    gauge('wattshift_plan_savings', 'Baseline cost minus expected cost.', one(plan.baselineCost - plan.expectedCost, cur));
    gauge('wattshift_plan_incentive', 'Incentive earned by the plan.', one(plan.incentive, cur));
    gauge('wattshift_plan_shortfalls', 'Targets the plan cannot meet.', one(plan.shortfalls.length));
    gauge('wattshift_plan_slots', 'Slots in the current plan.', one(plan.slots.length));
  }
  if (view.price) {
    const p = view.price;
    gauge('wattshift_price_per_kwh', 'Current electricity price per kWh by component.', [
      ...one(p.totalPerKwh, { currency: p.currency, component: 'total' }),
      ...one(p.spotPerKwh, { currency: p.currency, component: 'spot' }),
      ...one(p.deltaPerKwh, { currency: p.currency, component: 'delta' }),
    ]);
  }
  gauge('wattshift_location_power_watts', 'Location active power.', one(view.location.powerW));
  gauge('wattshift_location_power_limit_watts', 'Location power limit.', one(view.location.limitKw * 1000));
  gauge('wattshift_location_lpc_cap_watts', 'Active power-limitation (LPC) cap.', one(view.location.lpcCapKw === undefined ? undefined : view.location.lpcCapKw * 1000));
  const dev = (d: HomeView['devices'][number]): Labels => ({ device: d.id, kind: d.kind });
  gauge('wattshift_device_energy_kwh', 'Cumulative energy counter of a device.', view.devices.flatMap((d) => one(d.energyKwh, dev(d))));
  gauge('wattshift_device_power_watts', 'Active power of a device.', view.devices.flatMap((d) => one(d.powerW, dev(d))));
  gauge('wattshift_device_temperature_celsius', 'Tank temperature.', view.devices.flatMap((d) => one(d.temperatureC, dev(d))));
  gauge('wattshift_device_available', '1 when the device answers.', view.devices.map((d) => ({ labels: dev(d), value: d.available ? 1 : 0 })));
  gauge('wattshift_device_planned_on', '1 when the plan has the device on now.', view.devices.map((d) => ({ labels: dev(d), value: d.plannedOn ? 1 : 0 })));
  gauge('wattshift_health_ok', '1 when every job is healthy.', [{ labels: {}, value: view.health.ok ? 1 : 0 }]);
  gauge('wattshift_job_ok', '1 when the job ran without error last time.', view.health.jobs.map((j) => ({ labels: { job: j.name }, value: j.ok ? 1 : 0 })));
  gauge('wattshift_job_last_error_timestamp_seconds', 'When the job last failed, by error code.',
    view.health.jobs.flatMap((j) => (j.lastError ? [{ labels: { job: j.name, code: j.lastError.code }, value: j.lastError.atMs / 1000 }] : [])));
  gauge('wattshift_outbox_pending', 'Reports waiting in the outbox.', one(view.outbox.pending));
  gauge('wattshift_outbox_rejected', 'Reports the API rejected.', one(view.outbox.rejected));
  gauge('wattshift_outbox_oldest_deadline_timestamp_seconds', 'Deadline of the oldest pending report.',
    one(view.outbox.oldestDeadlineMs === undefined ? undefined : view.outbox.oldestDeadlineMs / 1000));
  counter('wattshift_request_errors_total', 'Failed outgoing requests by target and error code.',
    snapshot.requestErrors.map((e) => ({ labels: { target: e.target, code: e.code }, value: e.count })));
  counter('wattshift_commands_total', 'MQTT commands by outcome.', (snapshot.commands ?? []).map((c) => ({ labels: { status: c.status }, value: c.count })));
  counter('wattshift_refused_inputs_total', 'Webhook calls, MQTT messages, commands and events refused, by source and error code.',
    (snapshot.refused ?? []).map((r) => ({ labels: { input: r.input, code: r.code }, value: r.count })));
  counter('wattshift_reports_total', 'Usage reports by outcome.', (snapshot.reports ?? []).map((c) => ({ labels: { status: c.status }, value: c.count })));
  return families.map(renderFamily).join('');
}
