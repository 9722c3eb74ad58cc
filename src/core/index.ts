/**
 * The pure core: prices and the planner. No I/O, no clocks; time is passed in.
 */
export * from './types.js';
export { buildPriceSeries, unitFactor } from './prices.js';
export { plan } from './planner.js';
export { defaultDrawProfileKwh, estimateTankTempC, tankModel, KWH_PER_L_K, type TankModel } from './tank.js';
export { localParts, slotLocalInfo } from './local-time.js';
export { evPowerKw, solveEv, type EvProblem, type EvSolution } from './ev.js';
