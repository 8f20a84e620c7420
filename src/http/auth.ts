/**
 * Optional authentication. When a verification key is configured, every /api
 * request needs `Authorization: Bearer <JWT>`, except the OpenAPI document and
 * CORS preflights, and so does /metrics unless METRICS_TOKEN gives it a token
 * of its own (its route counts and process details are not for anyone). It
 * runs in onRequest, before the body is read, so a 401 comes before 413, 415
 * and 400 as the precedence in docs/errors.md says. The event stream also takes
 * `?access_token=` (an EventSource cannot send headers).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { AppError, ErrorKinds } from '../errors.ts';
import { Author } from '../domain/message.ts';
import { assertJsonContentType } from './json-body.ts';
import { createTokenVerifier, invalidToken, mintDevToken } from './token-verifier.ts';
import { privateCacheControl, urlTokens } from './url-tokens.ts';

/** Paths under /api that need no token. */
const PUBLIC_API_ROUTES = new Set(['/api/openapi.json']);
/** Outside /api, the route that needs a token when it has none of its own (METRICS_TOKEN). */
const METRICS_ROUTE = '/metrics';
/** The only route that takes the token from the query string (RFC 6750 section 2.3). */
const QUERY_TOKEN_ROUTES = new Set(['/api/events']);
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const DEV_TOKEN_LIFETIME_SECONDS = 3600;

/** A URL (query and all: not split, every request asks) or a route pattern under /api. */
function isApiPath(url: string): boolean {
  return url.startsWith('/api/') || url === '/api' || url.startsWith('/api?');
}

/** A request for the API: by its path, or by the route it matched (whatever its spelling). */
export function isApiRequest(request: FastifyRequest): boolean {
  // The route only when the path does not tell: Fastify builds `routeOptions` at each read.
  if (isApiPath(request.url)) return true;
  const route = request.routeOptions.url;
  return route !== undefined && isApiPath(route);
}

function missingToken(): AppError {
  // No error attribute when no token was sent (RFC 6750 section 3.1).
  return new AppError(ErrorKinds.unauthorized, 'This request needs a bearer token.', {
    headers: { 'www-authenticate': 'Bearer' },
  });
}

function tokenTwice(): AppError {
  const detail = 'Send the token either in the Authorization header or as access_token, not both.';
  return new AppError(ErrorKinds.validation, detail, {
    errors: [{ parameter: 'access_token', detail }],
    headers: { 'www-authenticate': 'Bearer error="invalid_request"' },
  });
}

function isPreflight(request: FastifyRequest): boolean {
  return (
    request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
  );
}

/** Sets request.actor from the bearer token, or throws 401 (400 for a token sent twice). */
export type Authenticator = (request: FastifyRequest) => Promise<void>;

/** The authenticator when auth is on (a key is configured), else null. */
export function createAuthenticator(config: Config): Authenticator | null {
  const verifier = createTokenVerifier(config);
  if (verifier === null) return null;
  const guardsMetrics = config.metricsToken === null;
  return async (request) => {
    const route = request.routeOptions.url;
    const metrics = guardsMetrics && route === METRICS_ROUTE;
    if (!(isApiRequest(request) || metrics) || isPreflight(request)) return;
    if (route !== undefined && PUBLIC_API_ROUTES.has(route)) return;

    const header = request.headers.authorization;
    const fromQuery =
      route !== undefined && QUERY_TOKEN_ROUTES.has(route) && request.method === 'GET'
        ? urlTokens(request.url)
        : [];
    if (fromQuery.length > 1 || (fromQuery.length === 1 && header !== undefined)) {
      throw tokenTwice();
    }
    let token: string;
    if (fromQuery.length === 1) {
      token = fromQuery[0]!;
    } else if (header === undefined || !/^bearer(\s|$)/i.test(header)) {
      // No credentials, or another scheme (Basic, ...): "no authentication information".
      throw missingToken();
    } else {
      const match = BEARER.exec(header);
      if (match === null) throw invalidToken('The Authorization header is not a bearer token.');
      token = match[1]!;
    }
    request.actor = await verifier.verify(token);
  };
}

/**
 * Private caching for tokens in URLs (marked in http-app.ts's first hook),
 * the authentication hook (when `authenticate` is not null: make it with
 * createAuthenticator), and the development token route when
 * AUTH_DEV_TOKENS is on.
 */
export function registerAuth(
  app: FastifyInstance,
  config: Config,
  authenticate: Authenticator | null,
): void {
  // Whatever answers a request with a token in its URL, auth on or off, stays private,
  // even where a route set its own Cache-Control.
  // A callback hook: an async one costs a promise and a microtask turn on every request.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.tokenInUrl) {
      const current = reply.getHeader('cache-control');
      reply.header('cache-control', privateCacheControl(current?.toString()));
    }
    done(null, payload);
  });

  if (authenticate !== null) app.addHook('onRequest', authenticate);

  if (config.authDevTokens) registerDevTokenRoute(app, config);
}

const DevTokenBody = Type.Object(
  {
    name: Author,
    admin: Type.Optional(Type.Boolean({ description: 'Carry the admin role.' })),
  },
  { additionalProperties: false },
);

/**
 * Development only (AUTH_DEV_TOKENS=true): mints a short-lived token for any
 * name, so the chat page can sign in without an identity provider. Anyone who
 * can reach it can act as anybody, so it never runs unless asked for.
 */
function registerDevTokenRoute(app: FastifyInstance, config: Config): void {
  app.post<{ Body: { name: string; admin?: boolean } }>(
    '/auth/dev-token',
    {
      schema: { hide: true, body: DevTokenBody },
      preValidation: async (request) => assertJsonContentType(request),
    },
    async (request, reply: FastifyReply) => {
      const { name, admin = false } = request.body;
      const token = await mintDevToken(config, name, admin, DEV_TOKEN_LIFETIME_SECONDS);
      return reply
        .header('cache-control', 'no-store')
        .type('application/json; charset=utf-8')
        .send({
          token,
          tokenType: 'Bearer',
          subject: name,
          admin,
          expiresIn: DEV_TOKEN_LIFETIME_SECONDS,
        });
    },
  );
}
