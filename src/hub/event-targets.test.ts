import { describe, expect, it } from 'vitest';
import { eventPerLocation, eventTargets } from './event-targets.js';

describe('eventTargets', () => {
  it('takes the locations and resources of a resource LPC, and the end of its last point', () => {
    const t = eventTargets({
      id: 'e1',
      payload: {
        payloadType: 'ResourceLPC',
        targets: [
          {
            locationId: 'loc-a',
            resourceId: 'res-a',
            resolution: '01:00:00',
            points: [
              { timestamp: '2026-01-01T10:00:00Z', maxPowerInKiloWatts: 1 },
              { timestamp: '2026-01-01T11:00:00Z', maxPowerInKiloWatts: 1 },
            ],
          },
          {
            locationId: 'loc-b',
            resourceId: 'res-b',
            resolution: '00:15:00',
            points: [{ timestamp: '2026-01-01T11:30:00Z', maxPowerInKiloWatts: 2 }],
          },
        ],
      },
    });
    expect(t).toEqual({ locationIds: ['loc-a', 'loc-b'], resourceIds: ['res-a', 'res-b'], userIds: [], endsAtMs: Date.UTC(2026, 0, 1, 12) });
  });

  it('names the users of an eligibility change, which covers no time', () => {
    const t = eventTargets({
      id: 'e2',
      payload: { payloadType: 'UserEligibility', lastUpdated: '2026-01-01T00:00:00Z', addedUsers: ['u1'], removedUsers: ['u2'] },
    });
    expect(t).toEqual({ locationIds: [], resourceIds: [], userIds: ['u1', 'u2'], endsAtMs: null });
  });

  it('takes price curve targets, ignores empty ids, and targets nobody for an unknown payload', () => {
    const curve = eventTargets({
      id: 'e3',
      payload: {
        payloadType: 'PriceCurve',
        priceArea: 'NO1',
        targets: [{ locationId: 'loc-a', resourceId: '' }],
        priceCurveDelta: { resolution: '01:00:00', points: [{ timestamp: '2026-01-01T10:00:00Z', price: -0.1 }] },
      },
    });
    expect(curve).toEqual({ locationIds: ['loc-a'], resourceIds: [], userIds: [], endsAtMs: Date.UTC(2026, 0, 1, 11) });
    expect(eventTargets({ id: 'e4', payload: { payloadType: 'SomethingNew' } })).toEqual({
      locationIds: [],
      resourceIds: [],
      userIds: [],
      endsAtMs: null,
    });
  });

  it("cuts an event to one location's targets: by location id or by a resource the registry places there", () => {
    const event = {
      id: 'e5',
      createdAt: '2026-01-01T00:00:00Z',
      payload: {
        payloadType: 'PriceCurve',
        priceArea: 'NO1',
        targets: [
          { locationId: 'loc-a', resourceId: 'res-a' },
          { locationId: 'loc-b', resourceId: 'res-b' },
          { locationId: 'loc-x', resourceId: 'res-c' },
        ],
        priceCurveDelta: { points: [] },
      },
    };
    const forLocation = eventPerLocation(event, ['loc-a', 'loc-b'], new Map([['res-c', 'loc-a']]));
    expect(forLocation('loc-a')).toEqual({
      ...event,
      payload: {
        ...event.payload,
        targets: [
          { locationId: 'loc-a', resourceId: 'res-a' },
          { locationId: 'loc-x', resourceId: 'res-c' },
        ],
      },
    });
    expect(forLocation('loc-b')).toEqual({ ...event, payload: { ...event.payload, targets: [{ locationId: 'loc-b', resourceId: 'res-b' }] } });
    expect(event.payload.targets).toHaveLength(3);
    const eligibility = { id: 'e6', payload: { payloadType: 'UserEligibility', addedUsers: ['u1'] } };
    expect(eventPerLocation(eligibility, ['loc-a'], new Map())('loc-a')).toBe(eligibility);
  });
});
