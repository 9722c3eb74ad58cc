import { describe, expect, it } from 'vitest';
import { unitOfKey } from './units.js';

describe('the unit of a config key', () => {
  it("comes from the key's suffix", () => {
    expect(
      [
        'elementKw',
        'capacityKwh',
        'floorC',
        'maxCurrentA',
        'voltageV',
        'volumeL',
        'minOnMinutes',
        'timeoutMs',
        'staleAfterS',
        'targetSocPct',
        'intervalDays',
        'gridFeePerKwh',
        'lossWPerK',
      ].map(unitOfKey),
    ).toEqual([' kW', ' kWh', ' °C', ' A', ' V', ' litres', ' minutes', ' ms', ' s', ' %', ' days', ' per kWh', ' W/K']);
  });
  it('is empty for keys that name no unit', () => {
    expect(['port', 'unitId', 'maxStartsPerDay', 'efficiency', 'count', 'A', 'C'].map(unitOfKey)).toEqual(['', '', '', '', '', '', '']);
  });
});
