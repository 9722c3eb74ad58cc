/** Types of scripts/build.mjs, for the tests that build the bundle themselves. */
export const external: string[];
/** Builds the daemon's bundle into `outdir` (default dist/), which must sit inside the package. */
export function buildBundle(outdir?: string): Promise<void>;
