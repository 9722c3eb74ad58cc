/**
 * Webhook signatures against Volue's signed test bodies. What was signed: the raw bytes of each
 * `.json` file exactly as stored, including its trailing newline, with the key file's content
 * (`Secret123%`, no trailing newline) as UTF-8. The `.hmacsha256b64` files end with a newline
 * that is not part of the signature.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { signPayload, verifySignature } from '../src/spark/webhook-signature.js';

const dir = fileURLToPath(new URL('../spec/webhook-test-data/', import.meta.url));
const key = readFileSync(`${dir}signing-key.txt`, 'utf8');
const cases = ['price-curve-event.json', 'user-eligibility-event.json'].map((file) => ({
  file,
  body: readFileSync(`${dir}${file}`),
  signature: readFileSync(`${dir}${file}.hmacsha256b64`, 'utf8').trim(),
}));

describe('webhook signature test data', () => {
  it('the key has no trailing newline and the bodies end with one', () => {
    expect(key).toBe('Secret123%');
    for (const c of cases) expect(c.body.at(-1)).toBe(0x0a);
  });

  it.each(cases.map((c) => [c.file, c] as const))('%s: signPayload reproduces the stored signature', (_f, c) => {
    expect(signPayload(c.body, key)).toBe(c.signature);
    expect(signPayload(c.body.toString('utf8'), key)).toBe(c.signature);
  });

  it.each(cases.map((c) => [c.file, c] as const))('%s: verifySignature accepts the stored signature', (_f, c) => {
    expect(verifySignature(c.body, c.signature, key)).toBe(true);
    // Surrounding whitespace in the header value is tolerated (HTTP strips it anyway).
    expect(verifySignature(c.body, ` ${c.signature} `, key)).toBe(true);
  });
});

describe('tampering', () => {
  const c = cases[0]!;

  it('rejects a body without its trailing newline (the raw bytes are signed)', () => {
    expect(verifySignature(c.body.subarray(0, -1), c.signature, key)).toBe(false);
  });

  it('rejects a re-serialised body', () => {
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(c.body.toString('utf8'))));
    expect(verifySignature(reserialised, c.signature, key)).toBe(false);
  });

  it('rejects a changed byte', () => {
    const tampered = Buffer.from(c.body);
    const at = tampered.indexOf('SE1');
    tampered[at + 2] = '2'.charCodeAt(0);
    expect(verifySignature(tampered, c.signature, key)).toBe(false);
  });

  it('rejects the wrong key, or the key with a newline', () => {
    expect(verifySignature(c.body, c.signature, 'Secret123')).toBe(false);
    expect(verifySignature(c.body, c.signature, `${key}\n`)).toBe(false);
  });

  it('rejects the signature of the other body', () => {
    expect(verifySignature(c.body, cases[1]!.signature, key)).toBe(false);
  });

  it('rejects missing, empty, malformed and wrong-length headers without throwing', () => {
    const headers = [
      undefined,
      '',
      'not base64 at all!!',
      c.signature.slice(0, -4),
      `${c.signature}AAAA`,
      c.signature.toLowerCase(),
      c.signature.replace('=', ''),
      Buffer.from(c.signature).toString('hex'),
      '='.repeat(44),
      `${c.signature.slice(0, 42)}1=`, // same length, non-canonical last character
      'é'.repeat(44),
    ];
    for (const h of headers) expect(() => verifySignature(c.body, h, key)).not.toThrow();
    for (const h of headers) expect(verifySignature(c.body, h, key), String(h)).toBe(false);
  });

  it('a changed character of the signature fails', () => {
    const first = c.signature[0] === 'A' ? 'B' : 'A';
    expect(verifySignature(c.body, `${first}${c.signature.slice(1)}`, key)).toBe(false);
  });

  it('signs UTF-8 text as its bytes', () => {
    expect(signPayload('{"name":"Ærlig"}', 'k')).toBe(signPayload(Buffer.from('{"name":"Ærlig"}', 'utf8'), 'k'));
    expect(verifySignature(Buffer.from('{"name":"Ærlig"}'), signPayload('{"name":"Ærlig"}', 'nøkkel'), 'nøkkel')).toBe(true);
  });
});
