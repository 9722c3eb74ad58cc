/**
 * The tariff model: what a Nordic household really pays per kWh and per month. Shipped tariff
 * files (`tariffs/*.yaml`), user files and an inline `site.tariff` are all parsed with this
 * schema. Every money figure is in the tariff's currency and excludes VAT; VAT is applied once.
 */
import { z } from 'zod';

const hour = z.number().int().min(0).max(24);
const month = z.number().int().min(1).max(12);
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD');
const perKwh = (what: string) => z.number().min(-100).max(100).describe(`${what}, per kWh, excluding VAT.`);

/** Local hours [from, to); `from > to` wraps past midnight (22–6 is the night). */
export const hourWindowSchema = z
  .strictObject({
    from: hour.describe('First local hour (0–23).'),
    to: hour.describe('Local hour the window ends, exclusive (1–24); smaller than `from` wraps past midnight.'),
  })
  .refine((w) => w.from !== w.to, 'an hour window needs from ≠ to');

export const dayKinds = ['all', 'weekdays', 'weekends'] as const;

/** When a rule applies: months, kinds of day (public holidays count as weekends), local hours. */
const whenShape = {
  months: z.array(month).min(1).optional().describe('Months it applies in, 1–12 (default: all).'),
  days: z.enum(dayKinds).default('all').describe('`weekdays` (Mon–Fri but holidays), `weekends` (Sat, Sun and holidays) or `all`.'),
  hours: hourWindowSchema.optional().describe('Local hours it applies in (default: the whole day).'),
};

export const gridPeriodSchema = z.strictObject({
  name: z.string().min(1).describe('Name of the period, shown in explanations ("day", "peak").'),
  ...whenShape,
  perKwh: perKwh('Grid energy fee in this period'),
});

export const capacityStepSchema = z.strictObject({
  upToKw: z.number().positive().max(10_000).nullable().describe('Upper end of the step, kWh/h (null: no upper end).'),
  perMonth: z.number().min(0).max(1_000_000).describe('Fee of the step per month, excluding VAT.'),
});

export const capacitySchema = z
  .strictObject({
    measure: z
      .enum(['dailyPeaks', 'hourlyPeaks'])
      .describe(
        '`dailyPeaks`: the mean of the `count` highest daily maxima of hourly energy, on different days (Norway, some Swedish companies); ' +
          '`hourlyPeaks`: the mean of the `count` highest hourly energies, any days.',
      ),
    count: z.number().int().min(1).max(10).default(3).describe('How many peaks the mean takes.'),
    ...whenShape,
    nightWeight: z
      .strictObject({
        weight: z.number().gt(0).max(1).describe('Factor on the hourly energy of these hours.'),
        hours: hourWindowSchema.describe('Local hours weighted.'),
      })
      .optional()
      .describe('Hours that count at a fraction (e.g. half at night, 22–6).'),
    steps: z.array(capacityStepSchema).min(1).optional().describe('Steps by the measure, ascending; the last may have `upToKw: null`.'),
    perKwPerMonth: z.number().min(0).max(100_000).optional().describe('Linear fee per kW of the measure per month, instead of steps.'),
    seasons: z
      .array(
        z.strictObject({
          months: z.array(z.number().int().min(1).max(12)).min(1).describe('Months (1–12) of the season.'),
          perKwPerMonth: z.number().min(0).max(100_000).describe('Fee per kW of the measure for a month of this season.'),
        }),
      )
      .min(1)
      .optional()
      .describe('Linear fee per kW that differs by season (e.g. winter and summer), instead of steps; every month in exactly one season.'),
  })
  .superRefine((c, ctx) => {
    const given = [c.steps, c.perKwPerMonth, c.seasons].filter((x) => x !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({ code: 'custom', message: 'give one of steps, perKwPerMonth or seasons', path: ['steps'] });
    }
    const months = (c.seasons ?? []).flatMap((s) => s.months);
    if (c.seasons && (months.length !== 12 || new Set(months).size !== 12)) {
      ctx.addIssue({ code: 'custom', message: 'seasons must name every month 1–12 exactly once', path: ['seasons'] });
    }
    const steps = c.steps ?? [];
    steps.forEach((s, i) => {
      const prev = steps[i - 1];
      if (prev && (prev.upToKw === null || (s.upToKw !== null && s.upToKw <= prev.upToKw))) {
        ctx.addIssue({
          code: 'custom',
          message: 'steps must rise: each upToKw above the previous one, null only last',
          path: ['steps', i, 'upToKw'],
        });
      }
    });
  });

export const tariffSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'expected [a-z0-9-]')
    .describe("Short name (a shipped file's name)."),
  title: z.string().min(1).optional().describe('Human name: company, product, area.'),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code')
    .describe("Currency of every figure; must be the site's currency."),
  source: z
    .strictObject({
      url: z.url({ protocol: /^https?$/ }).describe('Where the figures come from.'),
      validFrom: isoDate.describe('Date the source says the figures apply from.'),
      checked: isoDate.describe('Date the source was read.'),
      notes: z.string().optional().describe('What is uncertain or simplified.'),
    })
    .optional()
    .describe('Where the figures come from (shipped files always say).'),
  energy: z
    .discriminatedUnion('basis', [
      z.strictObject({
        basis: z.literal('spot'),
        markupPerKwh: perKwh('Supplier markup on the spot price').default(0),
      }),
      z.strictObject({
        basis: z.literal('fixed'),
        pricePerKwh: perKwh('Fixed energy price (e.g. Norgespris 0.40 NOK)'),
      }),
    ])
    .prefault({ basis: 'spot' })
    .describe('Energy price basis: spot plus a markup, or a fixed price.'),
  subsidy: z
    .strictObject({
      thresholdPerKwh: perKwh('Spot price above which the support starts'),
      share: z.number().min(0).max(1).describe('Share of the spot price above the threshold that is refunded.'),
    })
    .optional()
    .describe("Household support per hour on spot above a threshold (Norway's strømstøtte). Ignored with a fixed price."),
  gridEnergy: z
    .strictObject({
      perKwh: perKwh('Grid energy fee where no period matches').default(0),
      periods: z.array(gridPeriodSchema).default([]).describe('Time-of-use periods; the first that matches a slot wins.'),
    })
    .prefault({})
    .describe('Grid energy fee by time of use.'),
  capacity: capacitySchema.optional().describe('Monthly capacity (power) fee.'),
  taxPerKwh: perKwh('Energy tax (forbruksavgift + Enova, energiskatt, elafgift)').default(0),
  vatPct: z.number().min(0).max(100).default(25).describe('VAT percent on energy, fees and tax.'),
  holidays: z
    .array(z.string().regex(/^(\d{4}-)?\d{2}-\d{2}$/, 'expected MM-DD or YYYY-MM-DD'))
    .default([])
    .describe('Public holidays (MM-DD every year, or YYYY-MM-DD) counted as weekend days.'),
});

export type Tariff = z.infer<typeof tariffSchema>;
export type TariffInput = z.input<typeof tariffSchema>;
export type CapacityRule = NonNullable<Tariff['capacity']>;
export type HourWindow = z.infer<typeof hourWindowSchema>;
export type DayKind = (typeof dayKinds)[number];
