import { describe, expect, it } from 'vitest';
import { buildLpcAck, buildUsageReport, hourMs, reportDueAtMs, subjectOf, type UsageTarget } from './reports.js';

const h0 = Date.UTC(2026, 0, 10, 22);
const tank: UsageTarget = { kind: 'resource', resourceId: 'res-tank', locationId: 'loc-1', meterPointId: null };
const home: UsageTarget = { kind: 'location', locationId: 'loc-1', meterPointId: '707057500011112222' };

describe('buildUsageReport', () => {
  it('reports one point per event hour with consumption, at the event timestamps', () => {
    const { report, gaps } = buildUsageReport({
      eventId: 'ev-1',
      eventHoursMs: [h0, h0 + hourMs, h0 + 2 * hourMs],
      targets: [tank],
      metered: new Map([
        [
          'res-tank',
          [
            { hourStartMs: h0 - hourMs, kwh: 9, quality: 'measured' },
            { hourStartMs: h0, kwh: 1.23456, quality: 'measured' },
            { hourStartMs: h0 + hourMs, kwh: 0, quality: 'measured' },
            { hourStartMs: h0 + 2 * hourMs, kwh: 2, quality: 'estimated' },
          ],
        ],
      ]),
    });
    expect(gaps).toEqual([]);
    expect(report).toEqual({
      eventId: 'ev-1',
      payloads: [
        {
          payloadType: 'EnergyUsage',
          resourceId: 'res-tank',
          locationId: 'loc-1',
          meterPointId: null,
          resolution: '01:00:00',
          points: [
            { timestamp: '2026-01-10T22:00:00.000Z', kiloWattHours: 1.235 },
            { timestamp: '2026-01-11T00:00:00.000Z', kiloWattHours: 2 },
          ],
        },
      ],
    });
  });

  it('leaves gap hours out and lists them instead of inventing energy', () => {
    const { report, gaps } = buildUsageReport({
      eventId: 'ev-2',
      eventHoursMs: [h0, h0 + hourMs],
      targets: [home],
      metered: new Map([[subjectOf(home), [{ hourStartMs: h0, kwh: 1.5, quality: 'gap' }]]]),
    });
    expect(report).toBeNull();
    expect(gaps).toEqual([
      { subject: 'location:loc-1', hourStartMs: h0 },
      { subject: 'location:loc-1', hourStartMs: h0 + hourMs },
    ]);
  });

  it('builds a LocationEnergyUsage payload for a behind-the-meter location', () => {
    const { report } = buildUsageReport({
      eventId: 'ev-3',
      eventHoursMs: [h0],
      targets: [home],
      metered: new Map([[subjectOf(home), [{ hourStartMs: h0, kwh: 0.8, quality: 'partial' }]]]),
    });
    expect(report?.payloads[0]).toMatchObject({ payloadType: 'LocationEnergyUsage', meterPointId: '707057500011112222' });
  });

  it('ignores event hours that are not on the hour', () => {
    const { report } = buildUsageReport({
      eventId: 'ev-4',
      eventHoursMs: [h0 + 60_000],
      targets: [tank],
      metered: new Map([['res-tank', [{ hourStartMs: h0, kwh: 1, quality: 'measured' }]]]),
    });
    expect(report).toBeNull();
  });
});

describe('reportDueAtMs', () => {
  it('is the end of the last hour plus the grace', () => {
    expect(reportDueAtMs([h0, h0 + hourMs], 5 * 60_000)).toBe(h0 + 2 * hourMs + 5 * 60_000);
  });
});

describe('buildLpcAck', () => {
  it('splits targets into acknowledged and declined per payload type', () => {
    const ack = buildLpcAck(
      'ev-lpc',
      [
        { kind: 'resource', resourceId: 'ev', locationId: 'loc-1', meterPointId: 'm1' },
        { kind: 'resource', resourceId: 'tank', locationId: 'loc-1', meterPointId: 'm1' },
        { kind: 'location', locationId: 'loc-1', meterPointId: 'm1' },
      ],
      (t) => t.kind === 'location' || t.resourceId === 'ev',
    );
    expect(ack.payloads).toEqual([
      {
        payloadType: 'ResourceLPCAcknowledgement',
        acknowledgedTargets: [{ meterPointId: 'm1', locationId: 'loc-1', resourceId: 'ev' }],
        declinedTargets: [{ meterPointId: 'm1', locationId: 'loc-1', resourceId: 'tank' }],
      },
      {
        payloadType: 'LocationLPCAcknowledgement',
        acknowledgedTargets: [{ meterPointId: 'm1', locationId: 'loc-1' }],
        declinedTargets: [],
      },
    ]);
  });
});
