import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/load.js';
import type { ConfigInput } from '../config/schema.js';
import { allowedPageHosts, statusPageUrl } from './page-url.js';

const http = (over: NonNullable<ConfigInput['http']>) => defaultConfig({ http: over }).http;

describe('the status page address', () => {
  it('is http.pageUrl when set, and its host name is allowed', () => {
    const h = http({ pageUrl: 'http://gateway.local:8787/', allowedHosts: ['pi.lan'] });
    expect(statusPageUrl(h)).toBe('http://gateway.local:8787/');
    expect(allowedPageHosts(h)).toEqual(['pi.lan', 'gateway.local']);
  });

  it('is the listen address when it is one outside address, and unknown for loopback or a wildcard', () => {
    expect(statusPageUrl(http({ host: '192.168.1.20', port: 8080 }))).toBe('http://192.168.1.20:8080/');
    expect(statusPageUrl(http({ host: 'fd00::20', port: 8080 }))).toBe('http://[fd00::20]:8080/');
    expect(statusPageUrl(http({}))).toBeUndefined();
    expect(statusPageUrl(http({ host: '0.0.0.0' }))).toBeUndefined();
    expect(statusPageUrl(http({ enabled: false, pageUrl: 'http://gateway.local/' }))).toBeUndefined();
  });

  it('must be an http(s) URL', () => {
    expect(() => http({ pageUrl: 'ftp://gateway.local/' })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        details: expect.objectContaining({
          problems: [expect.objectContaining({ path: 'http.pageUrl', message: expect.stringMatching(/http:\/\/ or https:\/\//) })],
        }),
      }),
    );
  });
});
