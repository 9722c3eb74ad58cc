/**
 * OCPP meter values from a charge point are held to the same physical bounds as every metered
 * value: a negative Power.Active.Import (a register with a direction) or an impossible energy
 * register is refused as DEVICE_BAD_VALUE, never taken as a reading.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createOcppCharger } from '../src/devices/ocpp/ocpp-charger.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { eventually } from './helpers/aedes.js';
import { closeOpened, never, open, password, startCentral, startMs } from './helpers/ocpp-world.js';
import { openRawOcpp } from './helpers/ocpp-raw-socket.js';

afterEach(closeOpened);

describe('OCPP meter values', () => {
  it('refuse a negative import power and an energy register beyond any meter, and take sound ones', async () => {
    const clock = new ManualClock(startMs);
    const { logger } = memoryLogger();
    const { cs, port } = await startCentral(clock, logger);
    const charger = createOcppCharger(cs.link('cp1'), {
      id: 'car',
      connectorId: 1,
      idTag: 'wattshift',
      maxCurrentA: 16,
      safeCurrentA: 6,
      leaseS: 600,
      staleAfterS: 120,
      clock,
      logger,
    });
    open.push({ close: async () => charger.close() });
    const cp = await openRawOcpp(port, 'cp1', password);
    open.push({ close: async () => cp.close() });
    const meter = async (id: string, power: string, energy: string): Promise<void> => {
      const sampledValue = [
        { value: energy, measurand: 'Energy.Active.Import.Register', unit: 'Wh' },
        { value: power, measurand: 'Power.Active.Import', unit: 'W' },
      ];
      cp.sendText(
        JSON.stringify([2, id, 'MeterValues', { connectorId: 1, meterValue: [{ timestamp: new Date(clock.nowMs()).toISOString(), sampledValue }] }]),
      );
      expect(await cp.next((t) => t.startsWith(`[3,"${id}"`) || t.startsWith(`[4,"${id}"`))).toBeDefined();
    };
    await meter('m1', '6900', '12000');
    await eventually(async () => expect(await charger.powerMeter!.readPowerW(never)).toBe(6900));
    await meter('m2', '-5000', '2e13');
    await eventually(async () => {
      await expect(charger.powerMeter!.readPowerW(never)).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' });
      await expect(charger.energyMeter!.readEnergyKwh(never)).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' });
    });
  });
});
