import { describe, expect, it } from 'vitest';
import { defaultRoomModel, roomTempAfter, simulateRoom } from './room-model.js';
import type { RoomModelParams } from './types.js';

const room: RoomModelParams = { heatCapacityKwhPerK: 1.2, heatLossKwPerK: 0.03, errorK: 0.2, source: 'learned' };

describe('defaultRoomModel', () => {
  it.each([
    // powerKw, floor area, construction → C (kWh/K), UA (kW/K)
    [1, 20, 'medium', (165 * 20) / 3600, 1 / 41],
    [1, 20, 'veryLight', (80 * 20) / 3600, 1 / 41],
    [2, 30, 'light', (110 * 30) / 3600, 2 / 41],
    [2, 30, 'heavy', (260 * 30) / 3600, 2 / 41],
    [0.8, 12, 'veryHeavy', (370 * 12) / 3600, 0.8 / 41],
    // No area: the heater serves 60 W/m² (1.2 kW → 20 m²), medium construction.
    [1.2, undefined, undefined, (165 * 20) / 3600, 1.2 / 41],
  ] as const)('%s kW, %s m², %s', (powerKw, floorAreaM2, construction, c, ua) => {
    const m = defaultRoomModel({ powerKw, ...(floorAreaM2 ? { floorAreaM2 } : {}), ...(construction ? { construction } : {}) });
    expect(m.heatCapacityKwhPerK).toBeCloseTo(c, 9);
    expect(m.heatLossKwPerK).toBeCloseTo(ua, 9);
    expect(m.source).toBe('default');
    expect(m.errorK).toBe(1);
  });

  it('takes a given heat loss, and sizes UA by the heat a heat pump gives', () => {
    expect(defaultRoomModel({ powerKw: 1, heatLossKwPerK: 0.05 }).heatLossKwPerK).toBe(0.05);
    expect(defaultRoomModel({ powerKw: 1, cop: 3 }).heatLossKwPerK).toBeCloseTo(3 / 41, 12);
  });

  it.each([[{ powerKw: 0 }], [{ powerKw: Number.NaN }], [{ powerKw: 1, floorAreaM2: -2 }], [{ powerKw: 1, heatLossKwPerK: 0 }]])(
    'refuses %j with PLAN_INPUT_INVALID',
    (input) => {
      expect(() => defaultRoomModel(input)).toThrow(expect.objectContaining({ code: 'PLAN_INPUT_INVALID' }));
    },
  );
});

describe('roomTempAfter', () => {
  /** The ODE integrated in small Euler steps. */
  const euler = (m: RoomModelParams, startC: number, outdoorC: number, heatKw: number, gainsKw: number, hours: number): number => {
    let temp = startC;
    const steps = 100_000;
    for (let i = 0; i < steps; i++) temp += ((heatKw + gainsKw - m.heatLossKwPerK * (temp - outdoorC)) * (hours / steps)) / m.heatCapacityKwhPerK;
    return temp;
  };

  it.each([
    [21, -10, 0, 0, 1],
    [21, -10, 1.5, 0.1, 1],
    [15, 5, 2, 0, 0.25],
    [22, 22, 0, 0, 3],
    [10, -25, 1, 0.3, 6],
  ])('from %s °C at %s °C outdoors, %s kW heat + %s kW gains over %s h: the exact solution', (startC, outdoorC, heatKw, gainsKw, hours) => {
    const exact = roomTempAfter(room, { startC, outdoorC, heatKw, gainsKw, hours });
    expect(exact).toBeCloseTo(euler(room, startC, outdoorC, heatKw, gainsKw, hours), 4);
  });

  it('tends to the steady temperature and holds it', () => {
    const steady = -10 + 1.5 / 0.03;
    expect(roomTempAfter(room, { startC: 20, outdoorC: -10, heatKw: 1.5, gainsKw: 0, hours: 10_000 })).toBeCloseTo(steady, 9);
    expect(roomTempAfter(room, { startC: steady, outdoorC: -10, heatKw: 1.5, gainsKw: 0, hours: 1 })).toBeCloseTo(steady, 12);
  });

  it('simulateRoom chains the steps', () => {
    const temps = simulateRoom(room, { startC: 20, hours: 1, outdoorC: [-5, -6, -7], heatKw: [1, 0, 0.5], gainsKw: 0.1 });
    let temp = 20;
    [1, 0, 0.5].forEach((heatKw, t) => {
      temp = roomTempAfter(room, { startC: temp, outdoorC: -5 - t, heatKw, gainsKw: 0.1, hours: 1 });
      expect(temps[t]).toBeCloseTo(temp, 12);
    });
  });
});
