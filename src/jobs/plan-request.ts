/**
 * One plan to make, as it crosses to the planner's thread by structured clone (plain data only),
 * and how it is made: the thread and the calling thread make it the same way.
 */
import { planWithCapacity, type CapacityContext } from '../core/capacity-plan.js';
import { planHome } from '../core/home-plan.js';
import type { HomePlanInput, Plan } from '../core/types.js';

export interface PlanRequest {
  input: HomePlanInput;
  nowMs: number;
  previous?: Plan;
  /** With a tariff's capacity fee: the whole bill is planned (energy and the month's step). */
  capacity?: CapacityContext;
}

/** Makes the plan a request asks for, on whichever thread calls it. */
export function planRequest(req: PlanRequest): Plan {
  return req.capacity ? planWithCapacity(req.input, req.nowMs, req.capacity, req.previous) : planHome(req.input, req.nowMs, req.previous);
}
