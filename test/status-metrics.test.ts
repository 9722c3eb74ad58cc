/** /metrics scraped over HTTP and read with a real Prometheus text parser. */
import parse from 'parse-prometheus-text-format';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonMetrics } from '../src/status/metrics.js';
import { startStatusServer, type StatusServer } from '../src/status/server.js';
import type { HomeView } from '../src/view/model.js';
import { sampleView, t0 } from './fixtures/ha/sample-view.js';

const servers: StatusServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function scrape(view: HomeView, metrics: DaemonMetrics): Promise<{ contentType: string | null; families: ReturnType<typeof parse> }> {
  const s = await startStatusServer({ port: 0, getView: () => view, metrics });
  servers.push(s);
  const res = await fetch(`${s.url}/metrics`);
  expect(res.status).toBe(200);
  return { contentType: res.headers.get('content-type'), families: parse(await res.text()) };
}

type Families = ReturnType<typeof parse>;
function family(families: Families, name: string) {
  const f = families.find((x) => x.name === name);
  if (!f) throw new Error(`no metric ${name}; have ${families.map((x) => x.name).join(', ')}`);
  return f;
}
function value(families: Families, name: string, labels: Record<string, string> = {}): number | undefined {
  const sample = family(families, name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample?.value === undefined ? undefined : Number(sample.value);
}

describe('/metrics', () => {
  it('has process metrics with event-loop lag, build info, and the view in base units', async () => {
    const view = sampleView(t0 + 18 * 3_600_000);
    view.limits = view.limits.map((l) => ({ ...l, active: l.eventId === 'lpc-2' }));
    const { contentType, families } = await scrape(view, new DaemonMetrics({ version: '9.9.9' }));
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(family(families, 'process_resident_memory_bytes').type).toBe('GAUGE');
    expect(value(families, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(value(families, 'wattshift_build_info', { version: '9.9.9', node: process.versions.node })).toBe(1);
    expect(value(families, 'wattshift_plan_expected_cost', { currency: 'NOK' })).toBe(41.27);
    expect(value(families, 'wattshift_plan_savings', { currency: 'NOK' })).toBeCloseTo(14.63, 6);
    // The sample plan was made 10 min before t0; the view is at t0 + 18 h.
    expect(value(families, 'wattshift_plan_age_seconds')).toBe(18 * 3600 + 600);
    const energy = family(families, 'wattshift_device_energy_joules_total');
    expect(energy.type).toBe('COUNTER');
    expect(value(families, 'wattshift_device_energy_joules_total', { device: 'tank' })).toBeCloseTo(1234.5678 * 3.6e6, 0);
    expect(value(families, 'wattshift_lpc_cap_watts', { applies_to: 'tank', event: 'lpc-2' })).toBe(0);
    expect(value(families, 'wattshift_lpc_cap_end_timestamp_seconds', { applies_to: 'tank' })).toBe((t0 + 20 * 3_600_000) / 1000);
    expect(value(families, 'wattshift_lpc_cap_watts', { applies_to: 'location' })).toBeUndefined();
    expect(value(families, 'wattshift_outbox_reports', { state: 'accepted' })).toBe(5);
    expect(value(families, 'wattshift_outbox_reports', { state: 'pending' })).toBe(2);
    expect(value(families, 'wattshift_events_applying')).toBe(3);
    expect(value(families, 'wattshift_job_ok', { job: 'control' })).toBe(1);
  });

  it('shows the main fuse, its headroom per measured line and whether it holds a charger', async () => {
    const view = sampleView(t0);
    view.location = {
      ...view.location,
      fuse: { mainFuseA: 25, headroomA: [11.5, null, 3.25], limiting: true, reason: 'main fuse 25 A: L3 at 21.8 A' },
    };
    const { families } = await scrape(view, new DaemonMetrics({ version: '1' }));
    expect(value(families, 'wattshift_fuse_amperes')).toBe(25);
    expect(value(families, 'wattshift_fuse_headroom_amperes', { line: 'L1' })).toBe(11.5);
    expect(value(families, 'wattshift_fuse_headroom_amperes', { line: 'L2' })).toBeUndefined();
    expect(value(families, 'wattshift_fuse_headroom_amperes', { line: 'L3' })).toBe(3.25);
    expect(value(families, 'wattshift_fuse_limiting')).toBe(1);
  });

  it("shows the month's bill by component and the capacity standing in watts", async () => {
    const view: HomeView = {
      ...sampleView(t0),
      bill: {
        month: '2026-03',
        monthStartMs: Date.UTC(2026, 1, 28, 23),
        currency: 'NOK',
        kwh: 80,
        energy: 60,
        gridFee: 20,
        tax: 8,
        subsidy: 4,
        vat: 40,
        incentive: -3,
        total: 321,
        hoursPriced: 30,
        hoursUnpriced: 2,
        capacity: { measureKw: 4.2, stepUpToKw: 5, marginKw: 0.8, fee: 250 },
        baseline: { total: 400.25, capacityFee: 500, hoursFromPlan: 30, hoursWithoutPlan: 0 },
        savings: 79.25,
        devices: [{ id: 'tank', kwh: 20, total: 31.5 }],
      },
    };
    const { families } = await scrape(view, new DaemonMetrics({ version: 't', processMetrics: false }));
    expect(value(families, 'wattshift_bill_month', { currency: 'NOK', component: 'total' })).toBe(321);
    expect(value(families, 'wattshift_bill_month', { component: 'capacity' })).toBe(250);
    expect(value(families, 'wattshift_bill_month', { component: 'incentive' })).toBe(-3);
    expect(value(families, 'wattshift_bill_month_device', { device: 'tank' })).toBe(31.5);
    expect(value(families, 'wattshift_bill_hours_unpriced')).toBe(2);
    expect(value(families, 'wattshift_bill_month_baseline', { currency: 'NOK' })).toBe(400.25);
    expect(value(families, 'wattshift_bill_month_savings', { currency: 'NOK' })).toBe(79.25);
    expect(value(families, 'wattshift_capacity_measure_watts')).toBeCloseTo(4200, 6);
    expect(value(families, 'wattshift_capacity_margin_watts')).toBeCloseTo(800, 6);
  });

  it('counts rejected commands, report outcomes, request errors and solve times as _total counters', async () => {
    const m = new DaemonMetrics({ version: 't', processMetrics: false });
    for (let i = 0; i < 8; i++) m.command(false);
    m.command(true);
    m.report('sent');
    m.report('retried', 'API_UNAVAILABLE');
    m.report('retried', 'API_UNAVAILABLE');
    m.requestError('dev "x"\\y', 'DEVICE_TIMEOUT');
    m.planSolved(0.2);
    m.planSolved(3);
    const { families } = await scrape(sampleView(), m);
    for (const name of ['wattshift_commands_total', 'wattshift_reports_total', 'wattshift_request_errors_total'])
      expect(family(families, name).type).toBe('COUNTER');
    expect(value(families, 'wattshift_commands_total', { status: 'error' })).toBe(8);
    expect(value(families, 'wattshift_commands_total', { status: 'ok' })).toBe(1);
    expect(value(families, 'wattshift_reports_total', { status: 'retried' })).toBe(2);
    expect(value(families, 'wattshift_reports_total', { status: 'rejected' })).toBe(0);
    expect(value(families, 'wattshift_request_errors_total', { target: 'api', code: 'API_UNAVAILABLE' })).toBe(2);
    expect(value(families, 'wattshift_request_errors_total', { target: 'dev "x"\\y' })).toBe(1);
    const solve = family(families, 'wattshift_plan_solve_seconds');
    expect(solve.type).toBe('HISTOGRAM');
    expect(solve.metrics[0]).toMatchObject({ count: '2', sum: '3.2' });
    expect(solve.metrics[0]!.buckets!['0.25']).toBe('1');
  });

  it('leaves out what is unknown instead of showing 0', async () => {
    const m = new DaemonMetrics({ version: 't', processMetrics: false });
    await scrape(sampleView(), m);
    const view = sampleView();
    view.plan = null;
    view.price = null;
    view.location = { ...view.location, powerW: undefined } as HomeView['location'];
    view.devices = view.devices.map((d) => ({ ...d, energyKwh: undefined }));
    const { families } = await scrape(view, m);
    const names = new Set(families.filter((f) => f.metrics.length > 0).map((f) => f.name));
    expect(
      [...names].filter(
        (n) => n.startsWith('wattshift_plan_expected') || n === 'wattshift_device_energy_joules_total' || n === 'wattshift_location_power_watts',
      ),
    ).toEqual([]);
    expect(value(families, 'wattshift_health_ok')).toBe(1);
  });
});
