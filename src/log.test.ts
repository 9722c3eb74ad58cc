import { describe, expect, it } from 'vitest';
import { createLogger } from './log.js';
import { rateLimitedWarn } from './log-limit.js';

function capture(secrets: string[] = []): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger({ secrets, destination: { write: (l: string) => void lines.push(l) } }) };
}

describe('secret masking', () => {
  it('masks every secret value, however short', () => {
    const { lines, logger } = capture(['Zq9', 'long-secret-value']);
    logger.info({ note: 'pw=Zq9;' }, 'token long-secret-value here');
    expect(lines.join('')).not.toMatch(/Zq9|long-secret-value/);
    expect(lines.join('')).toContain('[REDACTED]');
  });
});

describe('rateLimitedWarn', () => {
  it('writes at most perWindow lines per code per window, then counts what it suppressed', () => {
    const { lines, logger } = capture();
    let now = 0;
    const warn = rateLimitedWarn(logger, { perWindow: 3, windowMs: 1000, now: () => now });
    for (let i = 0; i < 2000; i++) warn('WEBHOOK_SIGNATURE_INVALID', {}, 'refused');
    warn('OTHER', {}, 'other code has its own budget');
    expect(lines).toHaveLength(4);
    now = 1000;
    warn('WEBHOOK_SIGNATURE_INVALID', {}, 'refused');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ code: 'WEBHOOK_SIGNATURE_INVALID', suppressed: 1997 });
  });
});
