import { describe, expect, it } from 'vitest';
import { parseRequestTarget } from './request-target.js';

describe('parseRequestTarget', () => {
  it('reads origin-form paths and queries as sent', () => {
    expect(parseRequestTarget('/healthz')).toEqual({ path: '/healthz', query: '', authority: undefined });
    expect(parseRequestTarget('/api/view?x=1&y=%41#frag')).toEqual({ path: '/api/view', query: 'x=1&y=%41', authority: undefined });
    // Not a scheme-relative URL: the first segment is a path, not a host name.
    expect(parseRequestTarget('//healthz')).toEqual({ path: '//healthz', query: '', authority: undefined });
    expect(parseRequestTarget('/a%2Fb/./..')?.path).toBe('/a%2Fb/./..');
  });

  it('takes the host of an absolute-form http(s) target', () => {
    expect(parseRequestTarget('http://gateway.local:8787/healthz?a=1')).toEqual({ path: '/healthz', query: 'a=1', authority: 'gateway.local:8787' });
    expect(parseRequestTarget('https://[::1]/')?.authority).toBe('[::1]');
  });

  it('refuses what is no usable target, without throwing', () => {
    for (const t of [
      undefined,
      '',
      '//[',
      '/[',
      '/%',
      '/%zz',
      '/a b',
      '/\u00e9',
      'http://a:99999/',
      'http://[',
      'http://[/healthz',
      'ftp://x/',
      'localhost:443',
      '*',
      'healthz',
      'javascript:alert(1)',
    ]) {
      expect(parseRequestTarget(t), String(t)).toBeNull();
    }
  });
});
