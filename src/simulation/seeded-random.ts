/**
 * `Math.random` drawn from a seed for the length of a simulated run: retry jitter, client ids and
 * every other random choice in the daemon and its peers repeat from run to run, as the digest of
 * a run requires. `crypto.randomUUID` stays random: the ids it makes are kept out of the digest.
 */
import { rng } from '../core/prng.js';

/** Replaces `Math.random` with a generator seeded by `seed`; returns the function that puts it back. */
export function seedMathRandom(seed: number): () => void {
  const original = Math.random;
  Math.random = rng(seed);
  return () => {
    Math.random = original;
  };
}
