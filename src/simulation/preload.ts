import { loadModbusClient } from '../devices/modbus/bus.js';
import { loadCentralSystem } from '../devices/ocpp/start.js';

/**
 * Loads ahead what the daemon loads on first use: a module load is file and loader work the kernel
 * cannot see, so time would run on beneath it (a Modbus connect timing out while its client loads).
 */
export async function preloadLazyModules(): Promise<void> {
  await loadModbusClient();
  await loadCentralSystem();
}
