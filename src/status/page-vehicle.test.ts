import { describe, expect, it } from 'vitest';
import { exampleHomeView } from '../ha/example-view.js';
import { deviceValues } from '../ha/state.js';
import { renderStatusPage } from './page.js';

describe('the car a charger recognised', () => {
  it("is named in the charger's row of the status page and on its vehicle topic", () => {
    const view = exampleHomeView();
    const charger = view.devices.find((d) => d.kind === 'evCharger')!;
    expect(deviceValues(charger).vehicle).toBeNull();
    expect(renderStatusPage(view, { timezone: 'UTC' })).not.toContain('Family &lt;car&gt;');
    charger.ev = { ...charger.ev!, vehicle: { id: 'family-car', name: 'Family <car>' } };
    expect(renderStatusPage(view, { timezone: 'UTC' })).toContain('plugged, 41 %, Family &lt;car&gt;');
    expect(deviceValues(charger).vehicle).toBe('Family <car>');
  });
});
