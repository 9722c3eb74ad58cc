import { randomBytes, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../ports.js';
import { json, type Reply } from './http-kit.js';

/**
 * The token endpoint (`POST /connect/token`, OAuth 2.0 client credentials, form-encoded, client
 * authentication in the form or by HTTP Basic) and bearer verification. Tokens are HS256 JWTs
 * with `iat`/`exp` in the sandbox clock's time, so an accelerated clock expires them too.
 */

export interface PartnerCredentials {
  clientId: string;
  clientSecret: string;
}

/** The documented local default pair (like other local emulators, printed on start). */
export const defaultCredentials: PartnerCredentials = { clientId: 'wattshift-local', clientSecret: 'local-secret' };

export class TokenService {
  private readonly key = new Uint8Array(randomBytes(32));
  /** Tokens issued per client id (a test hook: the client should fetch one per hour). */
  readonly issued = new Map<string, number>();

  constructor(
    private readonly partners: readonly PartnerCredentials[],
    private readonly clock: Clock,
    private readonly issuer: string,
    readonly ttlSeconds: number,
  ) {}

  async handleTokenRequest(form: URLSearchParams, authorization: string | undefined): Promise<Reply> {
    let clientId = form.get('client_id');
    let clientSecret = form.get('client_secret');
    if (authorization?.toLowerCase().startsWith('basic ')) {
      const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) {
        // RFC 6749 §2.3.1: both parts are form-urlencoded; a malformed escape is a client error.
        try {
          clientId = decodeURIComponent(decoded.slice(0, colon));
          clientSecret = decodeURIComponent(decoded.slice(colon + 1));
        } catch {
          return oauthError(400, 'invalid_request', 'malformed percent-encoding in the Basic credentials');
        }
      }
    }
    const grant = form.get('grant_type');
    if (!grant) return oauthError(400, 'invalid_request', 'grant_type is required');
    if (grant !== 'client_credentials') return oauthError(400, 'unsupported_grant_type', 'only client_credentials is supported');
    if (!clientId || !clientSecret) return oauthError(400, 'invalid_request', 'client_id and client_secret are required');
    const partner = this.partners.find((p) => p.clientId === clientId);
    if (!partner || !safeEqual(partner.clientSecret, clientSecret))
      return { ...oauthError(401, 'invalid_client', 'unknown client or wrong secret'), headers: { 'www-authenticate': 'Basic realm="sandbox"' } };
    const nowS = Math.floor(this.clock.nowMs() / 1000);
    const token = await new SignJWT({ client_id: partner.clientId, scope: 'energy-coordination smart' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(partner.clientId)
      .setIssuer(this.issuer)
      .setAudience('energy-coordination')
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + this.ttlSeconds)
      .setJti(randomBytes(8).toString('hex'))
      .sign(this.key);
    this.issued.set(partner.clientId, (this.issued.get(partner.clientId) ?? 0) + 1);
    return {
      ...json(200, { access_token: token, expires_in: this.ttlSeconds, token_type: 'Bearer', scope: 'energy-coordination smart' }),
      headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
    };
  }

  /** The client id of a valid bearer token, or undefined (missing, forged, expired). */
  async verify(authorization: string | undefined): Promise<string | undefined> {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!m?.[1]) return undefined;
    try {
      const { payload } = await jwtVerify(m[1], this.key, {
        issuer: this.issuer,
        audience: 'energy-coordination',
        algorithms: ['HS256'],
        currentDate: new Date(this.clock.nowMs()),
        requiredClaims: ['exp', 'sub'],
      });
      return typeof payload.sub === 'string' && this.partners.some((p) => p.clientId === payload.sub) ? payload.sub : undefined;
    } catch {
      return undefined;
    }
  }
}

function oauthError(status: number, error: string, description: string): Reply {
  return json(status, { error, error_description: description });
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
