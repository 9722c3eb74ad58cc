/**
 * The planner's worker thread (see plan-worker.ts): answers each request with a plan or an error.
 */
import { parentPort } from 'node:worker_threads';
import { codeOf } from '../errors.js';
import { planRequest, type PlanRequest } from './plan-request.js';
import type { PlanReply } from './plan-worker.js';

parentPort?.on('message', (req: PlanRequest) => {
  let reply: PlanReply;
  try {
    reply = { plan: planRequest(req) };
  } catch (err) {
    reply = { error: { code: codeOf(err), message: err instanceof Error ? err.message : String(err) } };
  }
  parentPort?.postMessage(reply);
});
