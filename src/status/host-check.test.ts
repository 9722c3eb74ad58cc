import { describe, expect, it } from 'vitest';
import { hostAllowed } from './host-check.js';

describe('hostAllowed (DNS rebinding guard)', () => {
  it('answers IP literals, localhost and configured names, with or without a port', () => {
    for (const h of [
      '127.0.0.1:8787',
      '192.168.1.20',
      '[::1]:8787',
      '[fe80::1]',
      'localhost:8787',
      'LOCALHOST',
      'gateway.local:8787',
      'Gateway.Local',
    ]) {
      expect(hostAllowed(h, ['gateway.local']), h).toBe(true);
    }
    expect(hostAllowed(undefined, [])).toBe(true);
  });

  it("refuses any other name: the attacker's rebinding domain, an empty host, a suffix trick, a broken IPv6 literal", () => {
    for (const h of [
      '[::1',
      '[',
      '[]',
      '[::1]evil.example',
      '[::1]:80:80',
      'evil.example:8787',
      'rebind.127.0.0.1.nip.io',
      '',
      ':8787',
      'gateway.local.evil.example',
      'localhost.evil.example',
    ]) {
      expect(hostAllowed(h, ['gateway.local']), h).toBe(false);
    }
  });
});
