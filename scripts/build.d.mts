/** Types of scripts/build.mjs, for the tests that build the bundle themselves. */
import type { BuildResult } from 'esbuild';

export const external: string[];
/** Each product's entries (output name to source file) and the pattern of its chunks' names. */
export const products: Record<'gateway' | 'hub' | 'sim', { entryPoints: Record<string, string>; chunks: string; plugins: unknown[] }>;
/** Builds the three products into `outdir` (default dist/), which must sit inside the package; each result has its metafile. */
export function buildBundle(outdir?: string): Promise<Record<'gateway' | 'hub' | 'sim', BuildResult<{ metafile: true }>>>;
