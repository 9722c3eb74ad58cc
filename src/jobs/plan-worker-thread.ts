/**
 * The planner's worker thread (see plan-worker.ts): answers each request with a plan or an error.
 */
import { parentPort } from 'node:worker_threads';
import { planHome } from '../core/home-plan.js';
import { codeOf } from '../errors.js';
import type { PlanReply, PlanRequest } from './plan-worker.js';

parentPort?.on('message', (req: PlanRequest) => {
  let reply: PlanReply;
  try {
    reply = { plan: planHome(req.input, req.nowMs, req.previous) };
  } catch (err) {
    reply = { error: { code: codeOf(err), message: err instanceof Error ? err.message : String(err) } };
  }
  parentPort?.postMessage(reply);
});
