/**
 * Time fields of the config: IANA time zones, and user schedules as a cron expression (node-cron's
 * five fields) with an optional time zone (the site's when absent). A bad value is a config error
 * at its key path and line.
 */
import { validateDetailed } from 'node-cron';
import { z } from 'zod';
import { isKnownTimeZone } from '../core/zoned-time.js';

/** An Area/Location name (or UTC); legacy names such as `CET` or `EST5EDT` are refused. */
export const ianaTimeZone = z
  .string()
  .refine((tz) => (tz.includes('/') || tz === 'UTC') && isKnownTimeZone(tz), 'expected an IANA time zone such as Europe/Oslo');

/** What node-cron says is wrong with `expression`, or undefined when it is valid. */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return `expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`;
  const result = validateDetailed(expression);
  if (result.valid) return undefined;
  return result.errors.map((e) => `${e.field}${e.value === undefined ? '' : ` "${e.value}"`}: ${e.message}`).join('; ') || 'not a cron expression';
}

export const cronExpression = z.string().superRefine((value, ctx) => {
  const problem = cronProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: `invalid cron expression "${value}": ${problem}` });
});

export const cronScheduleSchema = z.strictObject({
  cron: cronExpression.describe('Cron expression, five fields: minute hour day-of-month month day-of-week, e.g. `30 7 * * 1-5` (07:30 on weekdays).'),
  timezone: ianaTimeZone.optional().describe('IANA time zone of the expression (default: `site.timezone`).'),
});
export type CronScheduleConfig = z.infer<typeof cronScheduleSchema>;
