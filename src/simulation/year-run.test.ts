/**
 * The year mode of the week-long home (`npm run sim:year`) for a day: its figures have the shape
 * the script prints, the cap it posts is kept, and a second run gives the same digest.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { parseTariff, tariffDir } from '../config/tariff-file.js';
import { demoTimezone } from '../demo/environment.js';
import { runWeekHome, weekStartMs } from './week-run.js';
import { yearFigures } from './year-figures.js';
import { yearEvents, yearSeasons } from './year-home.js';

const nok = z.number().finite();
const figuresSchema = z.strictObject({
  days: z.literal(1),
  seed: z.number().int(),
  months: z
    .array(
      z.strictObject({
        month: z.string().regex(/^\d{4}-\d{2}$/),
        billNok: nok,
        baselineNok: nok,
        incentiveNok: nok,
        capacityStepUpToKw: z.number().nullable(),
        stepIndex: z.number().int().nullable(),
        baselineStepIndex: z.number().int().nullable(),
      }),
    )
    .length(1),
  billNok: z.number().positive(),
  savingsNok: nok,
  incentiveNok: nok,
  capacityStepsAvoided: z.number().int(),
  minutesBelowFloor: z.strictObject({ tank: z.number().min(0), heatpump: z.number().min(0) }),
  caps: z.strictObject({ posted: z.literal(1), acknowledged: z.number().int(), declined: z.number().int(), unanswered: z.literal(0) }),
  capViolations: z.literal(0),
  deltas: z.literal(1),
  reportsAccepted: z.number().int().positive(),
  departures: z.number().int(),
  departuresShort: z.number().int(),
  daemonErrors: z.literal(0),
  stoppedCleanly: z.literal(true),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  kernel: z.strictObject({ instants: z.number(), settles: z.number(), turns: z.number(), timerWaits: z.number() }),
});

it('runs a day of the year mode twice to the same digest, with its cap kept', { timeout: 900_000 }, async () => {
  const seed = 11;
  const { tariff } = parseTariff(readFileSync(join(tariffDir(), 'elvia.yaml'), 'utf8'), 'elvia.yaml');
  const oneDay = async () => {
    const seasons = yearSeasons(weekStartMs, 1, seed, demoTimezone);
    const run = await runWeekHome({ days: 1, seed, controlTickMs: 60_000, seasons, events: yearEvents(weekStartMs, 1, seed) });
    return figuresSchema.parse(JSON.parse(JSON.stringify(yearFigures(run, 1, seed, tariff?.capacity))));
  };
  const first = await oneDay();
  const second = await oneDay();
  expect(first.caps.acknowledged + first.caps.declined).toBe(1);
  expect(second.digest).toBe(first.digest);
});
