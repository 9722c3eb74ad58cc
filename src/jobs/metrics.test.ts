import { describe, expect, it } from 'vitest';
import { Counters } from './metrics.js';

describe('Counters', () => {
  it('counts report outcomes, their error codes and commands', () => {
    const c = new Counters();
    c.report('sent');
    c.report('retried', 'API_UNAVAILABLE');
    c.report('retried', 'API_UNAVAILABLE');
    c.report('rejected', 'API_REJECTED');
    c.command(true);
    c.command(false);
    c.requestError('tank', 'DEVICE_TIMEOUT');
    const s = c.snapshot();
    expect(s.reports).toEqual([{ status: 'sent', count: 1 }, { status: 'rejected', count: 1 }, { status: 'retried', count: 2 }]);
    expect(s.commands).toEqual([{ status: 'ok', count: 1 }, { status: 'error', count: 1 }]);
    expect(s.requestErrors).toEqual(
      expect.arrayContaining([
        { target: 'api', code: 'API_UNAVAILABLE', count: 2 },
        { target: 'api', code: 'API_REJECTED', count: 1 },
        { target: 'tank', code: 'DEVICE_TIMEOUT', count: 1 },
      ]),
    );
  });
});
