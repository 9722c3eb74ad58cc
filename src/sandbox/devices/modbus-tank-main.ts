/**
 * Runs the simulated Modbus TCP water heater on its own:
 *
 *   npx tsx src/sandbox/devices/modbus-tank-main.ts [--port 5020] [--speed 60] [--unit 1]
 *
 * Time runs `speed` times faster than real time; the state is logged once a simulated hour.
 * Talk to it with any Modbus client using the `wattshift-sim-tank` register map. Ctrl-C stops it.
 */
import { parseArgs } from 'node:util';
import { acceleratedClock } from '../../clock.js';
import { createLogger } from '../../log.js';
import { startSimulatedTank } from './modbus-tank.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '5020' },
    speed: { type: 'string', default: '60' },
    unit: { type: 'string', default: '1' },
  },
});

const log = createLogger().child({ component: 'sim-tank' });
const speed = Number(values.speed);
const clock = acceleratedClock(Date.now(), speed);
const tank = await startSimulatedTank({ clock, port: Number(values.port), unitId: Number(values.unit) });
log.info({ host: tank.host, port: tank.port, unitId: tank.unitId, speed }, 'simulated tank listening (profile wattshift-sim-tank)');

const timer = setInterval(() => log.info(tank.state(), 'state'), 3_600_000 / speed);
const stop = (): void => {
  clearInterval(timer);
  void tank.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
