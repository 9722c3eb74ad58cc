/**
 * Reports waiting for the hub's receipt, by idempotency key. A receipt nobody waits for (a copy,
 * or one that came after its wait timed out) is kept for a while, so the next send of that key
 * settles at once; a duplicate of a settled one changes nothing.
 */
import type { Clock } from '../ports.js';
import { WattshiftError } from '../errors.js';
import type { FleetReceipt } from '../fleet/wire.js';

/** Receipts kept without a waiter: far more than a gateway's reports in a retry window. */
const keptReceipts = 500;

export interface ReceiptBook {
  /** Waits for the receipt of `key` (after `send`), up to `timeoutMs` of clock time. */
  await(key: string, send: () => Promise<void>, timeoutMs: number, signal: AbortSignal): Promise<FleetReceipt>;
  /** A receipt arrived; true when someone was waiting for it. */
  settle(receipt: FleetReceipt): boolean;
}

export function createReceiptBook(clock: Clock): ReceiptBook {
  const waiting = new Map<string, (r: FleetReceipt) => void>();
  const unclaimed = new Map<string, FleetReceipt>();

  return {
    async await(key, send, timeoutMs, signal) {
      const early = unclaimed.get(key);
      if (early) {
        unclaimed.delete(key);
        return early;
      }
      const stop = new AbortController();
      const onAbort = (): void => stop.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const receipt = new Promise<FleetReceipt>((resolve) => waiting.set(key, resolve));
        // The receipt may come before the PUBACK: the waiter is set first.
        await send();
        const timeout = clock.sleep(timeoutMs, stop.signal).then(() => {
          throw new WattshiftError('FLEET_RECEIPT_TIMEOUT', `no receipt from the hub within ${Math.round(timeoutMs / 1000)} s`, { details: { key } });
        });
        return await Promise.race([receipt, timeout]);
      } finally {
        waiting.delete(key);
        signal.removeEventListener('abort', onAbort);
        stop.abort();
      }
    },
    settle(receipt) {
      const waiter = waiting.get(receipt.idempotencyKey);
      if (waiter) {
        waiting.delete(receipt.idempotencyKey);
        waiter(receipt);
        return true;
      }
      unclaimed.delete(receipt.idempotencyKey);
      unclaimed.set(receipt.idempotencyKey, receipt);
      if (unclaimed.size > keptReceipts) unclaimed.delete(unclaimed.keys().next().value!);
      return false;
    },
  };
}
