/**
 * Bearer token verification with `jose`: an HS256 secret or a remote JWKS
 * (keys cached, and refetched when a token names an unknown key, as `jose`
 * does). A verified token becomes an Actor; anything else is a 401, except a
 * key server that cannot be reached, which is a 503: the token may be fine.
 */
import {
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import type { Config } from '../config.ts';
import { AppError, ErrorKinds } from '../errors.ts';
import type { Actor } from '../domain/actor.ts';
import { Author, MAX_AUTHOR_CODE_POINTS } from '../domain/message.ts';

/** Signature algorithms a JWKS may use. Symmetric ones never (a public key is not a secret). */
const ASYMMETRIC = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

const authorPattern = new RegExp(Author.pattern!, 'u');

export interface TokenVerifier {
  /** The actor a token stands for; throws a 401 AppError (or 503 when the key server is down). */
  verify(token: string): Promise<Actor>;
}

/** A sent token that is not accepted: 401 with `error="invalid_token"` (RFC 6750 section 3.1). */
export function invalidToken(detail: string): AppError {
  return new AppError(ErrorKinds.unauthorized, detail, {
    headers: {
      'www-authenticate': `Bearer error="invalid_token", error_description="${detail.replace(/["\\]/g, '')}"`,
    },
  });
}

class KeySourceUnavailable extends Error {}

/** The `sub` must be usable as an author: the same rules as the body field. */
export function isValidSubject(sub: unknown): sub is string {
  if (typeof sub !== 'string') return false;
  const codePoints = [...sub].length;
  return codePoints >= 1 && codePoints <= MAX_AUTHOR_CODE_POINTS && authorPattern.test(sub);
}

/** The admin claim may be a string (or space-separated list, like `scope`) or an array. */
export function hasRole(payload: JWTPayload, claim: string, value: string): boolean {
  const roles = payload[claim];
  if (typeof roles === 'string') return roles.split(' ').includes(value);
  return Array.isArray(roles) && roles.includes(value);
}

export function createTokenVerifier(config: Config): TokenVerifier | null {
  let key: Uint8Array | JWTVerifyGetKey;
  let algorithms: string[];
  if (config.authJwtSecret !== null) {
    key = new TextEncoder().encode(config.authJwtSecret);
    algorithms = ['HS256'];
  } else if (config.authJwksUrl !== null) {
    const jwks = createRemoteJWKSet(new URL(config.authJwksUrl), {
      timeoutDuration: 5_000,
      cooldownDuration: 30_000,
      cacheMaxAge: 10 * 60_000,
    });
    key = async (header, token) => {
      try {
        return await jwks(header, token);
      } catch (error) {
        // No key for this token is the token's fault; a failed fetch is ours.
        if (
          error instanceof joseErrors.JWKSNoMatchingKey ||
          error instanceof joseErrors.JWKSMultipleMatchingKeys ||
          error instanceof joseErrors.JOSENotSupported
        ) {
          throw error;
        }
        throw new KeySourceUnavailable('the JWKS could not be fetched', { cause: error });
      }
    };
    algorithms = ASYMMETRIC;
  } else {
    return null;
  }
  const options: JWTVerifyOptions = {
    algorithms,
    clockTolerance: config.authClockToleranceSeconds,
    requiredClaims: ['sub', 'exp'],
    ...(config.authIssuer === null ? {} : { issuer: config.authIssuer }),
    ...(config.authAudience === null ? {} : { audience: config.authAudience }),
  };

  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        payload = (
          typeof key === 'function'
            ? await jwtVerify(token, key, options)
            : await jwtVerify(token, key, options)
        ).payload;
      } catch (error) {
        throw refusal(error);
      }
      if (!isValidSubject(payload.sub)) {
        throw invalidToken('The token subject is not a valid author name.');
      }
      return {
        subject: payload.sub,
        admin: hasRole(payload, config.authAdminClaim, config.authAdminValue),
      };
    },
  };
}

function refusal(error: unknown): AppError {
  if (error instanceof KeySourceUnavailable) {
    return new AppError(
      ErrorKinds.storeUnavailable,
      'The token keys cannot be fetched right now; retry shortly.',
      { headers: { 'retry-after': '5' }, cause: error },
    );
  }
  if (error instanceof joseErrors.JWTExpired) return invalidToken('The token has expired.');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return invalidToken(`The token's ${error.claim} claim is not accepted.`);
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return invalidToken('The token signature does not verify.');
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) {
    return invalidToken('The token algorithm is not accepted.');
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey) {
    return invalidToken('No key matches the token.');
  }
  return invalidToken('The token is malformed.');
}

/** Development helper: a short-lived HS256 token for a name, from the configured secret. */
export async function mintDevToken(
  config: Config,
  subject: string,
  admin: boolean,
  lifetimeSeconds: number,
): Promise<string> {
  if (config.authJwtSecret === null) throw new Error('dev tokens need AUTH_JWT_SECRET');
  let jwt = new SignJWT(admin ? { [config.authAdminClaim]: [config.authAdminValue] } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(`${lifetimeSeconds}s`);
  if (config.authIssuer !== null) jwt = jwt.setIssuer(config.authIssuer);
  if (config.authAudience !== null) jwt = jwt.setAudience(config.authAudience);
  return jwt.sign(new TextEncoder().encode(config.authJwtSecret));
}
