import type { WattshiftError } from '../../errors.js';

/**
 * Fails the requests in flight on a connection when it is lost. Each request gets its own
 * short-lived rejection, dropped when the request settles: racing every request against one
 * long-lived "lost" promise instead would add a reaction to it per request, kept until the
 * connection dies (days on a healthy bus: a leak of about 100 bytes per request).
 */
export class LossWatch {
  private failure: WattshiftError | null = null;
  private readonly inFlight = new Set<(err: WattshiftError) => void>();

  /** Requests currently watched (for tests and diagnostics). */
  get watching(): number {
    return this.inFlight.size;
  }

  /** Resolves or rejects as `work` does, or rejects with the loss if the connection goes first. */
  async guard<T>(work: Promise<T>): Promise<T> {
    if (this.failure) {
      work.catch(() => undefined);
      throw this.failure;
    }
    let reject!: (err: WattshiftError) => void;
    const lost = new Promise<never>((_resolve, rej) => {
      reject = rej;
    });
    this.inFlight.add(reject);
    try {
      return await Promise.race([work, lost]);
    } finally {
      this.inFlight.delete(reject);
    }
  }

  /** Marks the connection lost: requests in flight and later ones fail with `err`. */
  fail(err: WattshiftError): void {
    if (this.failure) return;
    this.failure = err;
    for (const reject of this.inFlight) reject(err);
    this.inFlight.clear();
  }
}
