import type { BillView } from '../view/model.js';
import { escapeXml as esc, fixed } from './format.js';

/** The month's bill so far, for the status page (HTML) and `wattshift status` (text lines). */
export function billLines(b: BillView): string[] {
  const m = (v: number): string => `${fixed(v, 2)} ${b.currency}`;
  const c = b.capacity;
  const lines = [
    `${b.month} so far: ${m(b.total)} for ${fixed(b.kwh, 1)} kWh (${b.hoursPriced} hours priced${b.hoursUnpriced > 0 ? `, ${b.hoursUnpriced} without a known price left out` : ''})`,
    `energy ${m(b.energy)}, grid fee ${m(b.gridFee)}, tax ${m(b.tax)}, subsidy −${m(b.subsidy)}, incentive ${m(b.incentive)}, VAT ${m(b.vat)}`,
  ];
  if (c) {
    const step = c.stepUpToKw === null ? 'top step' : `step up to ${fixed(c.stepUpToKw, 1)} kW, ${fixed(c.marginKw ?? 0, 2)} kW to spare`;
    lines.push(`capacity: ${fixed(c.measureKw, 2)} kW (${step}), ${m(c.fee)} incl. VAT`);
  }
  const base = b.baseline;
  const noPlan = base.hoursWithoutPlan > 0 ? `; ${base.hoursWithoutPlan} hours no plan covered count as they were (no savings claimed)` : '';
  lines.push(
    `saved ${m(b.savings)} against no shifting, which would have cost ${m(base.total)}${c ? ` (capacity ${m(base.capacityFee)})` : ''}${noPlan}`,
  );
  for (const d of b.devices) lines.push(`${d.id}: ${m(d.total)} for ${fixed(d.kwh, 1)} kWh`);
  return lines;
}

export function billSection(b: BillView | null | undefined): string {
  if (!b) return '<h2>Bill</h2><p class="muted" id="bill">No metered hour priced yet this month (needs a main meter).</p>';
  return `<h2>Bill</h2><ul id="bill">${billLines(b)
    .map((l) => `<li>${esc(l)}</li>`)
    .join('')}</ul>`;
}
