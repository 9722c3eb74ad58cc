import { z } from 'zod';

/**
 * Times are stored as whole milliseconds (STRICT INTEGER columns). Inputs are rounded, because
 * an accelerated clock can return fractional milliseconds; rows read back must be integers.
 */
export const msInput = z
  .number()
  .transform((v) => Math.round(v))
  .pipe(z.number().int().safe());
export const msRow = z.number().int().safe();
export const roundMs = (v: number): number => Math.round(v);
