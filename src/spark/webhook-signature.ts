/**
 * Webhook body signatures: `X-Payload-Signature` = Base64(HMAC-SHA256(key = webhook secret as
 * UTF-8, message = the raw request body bytes, exactly as received, trailing newline included)).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the signature (HTTP header names are case-insensitive). */
export const signatureHeader = 'x-payload-signature';

/** The Base64 HMAC-SHA256 of `rawBody` with `secret`. Strings are signed as their UTF-8 bytes. */
export function signPayload(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest('base64');
}

const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Whether `header` is the signature of `rawBody` under `secret`. Compares the decoded digests in
 * constant time. A missing, empty, non-Base64 or wrong-length header yields false; never throws.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const given = header.trim();
  if (given.length !== 44 || !base64.test(given)) return false;
  const givenBytes = Buffer.from(given, 'base64');
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest();
  if (givenBytes.length !== expected.length) return false;
  // Base64 allows non-canonical trailing bits; require the canonical text too.
  if (givenBytes.toString('base64') !== given) return false;
  return timingSafeEqual(givenBytes, expected);
}
