/** Tokens for the auth tests: good ones, and every way of getting one wrong. */
import { SignJWT, base64url, type JWTPayload } from 'jose';
import type { Config } from '../../src/config.ts';

export const SECRET = 'test-secret-0123456789-abcdefghijklmnop';
export const OTHER_SECRET = 'another-secret-0123456789-abcdefghijkl';
export const ISSUER = 'https://issuer.test';
export const AUDIENCE = 'message-service';

/** Auth on with the HS256 secret (and rate limits off, as in every test config). */
export const AUTH: Partial<Config> = { authJwtSecret: SECRET };

export interface TokenOptions {
  readonly secret?: string;
  readonly sub?: unknown;
  /** Seconds from now; null leaves `exp` out. */
  readonly expiresIn?: number | null;
  readonly notBefore?: number;
  readonly issuer?: string;
  readonly audience?: string;
  readonly claims?: JWTPayload;
}

export async function token(options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = { ...options.claims, iat: now };
  if (!('sub' in options)) payload.sub = 'ada';
  else if (options.sub !== undefined) payload.sub = options.sub as string;
  const expiresIn = options.expiresIn === undefined ? 3600 : options.expiresIn;
  if (expiresIn !== null) payload.exp = now + expiresIn;
  if (options.notBefore !== undefined) payload.nbf = now + options.notBefore;
  if (options.issuer !== undefined) payload.iss = options.issuer;
  if (options.audience !== undefined) payload.aud = options.audience;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(options.secret ?? SECRET));
}

export function bearer(jwt: string): Record<string, string> {
  return { authorization: `Bearer ${jwt}` };
}

/** An unsecured token (`alg: none`), as an attacker would forge it. */
export function unsecuredToken(payload: JWTPayload): string {
  const part = (value: object) => base64url.encode(JSON.stringify(value));
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}

/** The token with its payload replaced but the original signature kept. */
export function tamperedPayload(jwt: string, payload: JWTPayload): string {
  const [header, , signature] = jwt.split('.');
  return `${header}.${base64url.encode(JSON.stringify(payload))}.${signature}`;
}
