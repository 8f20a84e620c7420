/**
 * Hardening around the routes: security headers with a content security
 * policy the page and /docs work under, CORS (off unless origins are listed),
 * slow-client timeouts, whom to believe X-Forwarded-For from, and problem documents for the
 * failures that happen before a request reaches the routes (a URL that cannot
 * be decoded, an HTTP message that cannot be parsed, headers too large or too
 * slow).
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { AppError, ErrorKinds, type ErrorKind } from '../errors.ts';
import type { Authenticator } from './auth.ts';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem.ts';
import { malformedReactionPath } from './reaction-routes.ts';
import { registerHelmetHeaders } from './security-headers.ts';
import { carriesToken } from './url-tokens.ts';

/** Response headers a cross-origin client may read. */
const EXPOSED_HEADERS = [
  'Location',
  'ETag',
  'Link',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'Event-Seq',
  'Idempotent-Replayed',
  'X-Request-Id',
  'WWW-Authenticate',
];
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'Last-Event-ID',
  'X-Request-Id',
];

/**
 * Same-origin everything, no inline script or style, no framing, no plugins.
 * The chat page and Swagger UI only load their own files and talk to their
 * own origin (fetch and EventSource are `connect-src`).
 */
export const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'base-uri': ["'none'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
};

/**
 * Swagger UI inserts one <style> element of its own at run time: /docs allows
 * exactly that one by its hash (the browser test fails if an upgrade changes it).
 */
const SWAGGER_UI_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

export function docsContentSecurityPolicy(header: string): string {
  return header.replace(/(^|;)style-src 'self'/, `$1style-src 'self' ${SWAGGER_UI_STYLE}`);
}

/** Node server options: slow senders are cut off, connections are capped. */
export function serverOptions(config: Config): { http: ServerOptions } {
  return {
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      // How often Node checks those timeouts; its default (30 s) would let a
      // slow client hold a socket for up to that much longer.
      connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs),
    },
  };
}

/**
 * Fastify's `trustProxy` for TRUST_PROXY. Fastify treats a bare hop count as
 * "trust nobody" (it cannot tell a proxy from a client that connects directly),
 * so a count becomes a function: the `hops` nearest addresses are proxies.
 */
export function trustProxyOption(
  trust: Config['trustProxy'],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}

export async function registerSecurity(app: FastifyInstance, config: Config): Promise<void> {
  // Helmet's headers, computed once (see security-headers.ts: @fastify/helmet rebuilds them per request).
  registerHelmetHeaders(app, {
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    // frame-ancestors 'none' says the same to browsers that read CSP.
    xFrameOptions: { action: 'deny' },
  });
  if (config.corsOrigins.length > 0) {
    const anyOrigin = config.corsOrigins.includes('*');
    await app.register(cors, {
      origin: anyOrigin ? '*' : [...config.corsOrigins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: EXPOSED_HEADERS,
      credentials: false,
      maxAge: 600,
    });
  }
}

/**
 * Fastify's answer when the router cannot decode a path (bad percent
 * encoding) or a path segment is too long: no message or path can have such
 * a name, so it is a 404, after authentication like any other /api request;
 * an undecodable or too long emoji or subject of a reaction path is a malformed
 * parameter (400).
 */
export function frameworkErrorHandler(getAuthenticator: () => Authenticator | null) {
  return (_error: Error, request: FastifyRequest, reply: FastifyReply): void => {
    const respond = (appError: AppError) => {
      for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
      void reply
        .code(appError.status)
        .header('x-request-id', request.id)
        .header('cache-control', carriesToken(request.url) ? 'private, no-cache' : 'no-cache')
        .type(PROBLEM_CONTENT_TYPE)
        .send(problemBody(appError, String(request.id)));
    };
    const authenticate = getAuthenticator();
    const checked = authenticate === null ? Promise.resolve() : authenticate(request);
    checked.then(
      () =>
        respond(
          malformedReactionPath(request.url) ?? new AppError(ErrorKinds.notFound, 'No such path.'),
        ),
      (error: unknown) =>
        respond(
          error instanceof AppError
            ? error
            : new AppError(ErrorKinds.internal, 'An unexpected error occurred.'),
        ),
    );
  };
}

function clientErrorKind(code: string | undefined): ErrorKind {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT') {
    return ErrorKinds.requestTimeout;
  }
  if (code === 'HPE_HEADER_OVERFLOW') return ErrorKinds.headersTooLarge;
  return ErrorKinds.malformedRequest;
}

/**
 * A request Node cannot parse (or that arrives too slowly) never reaches
 * Fastify: answer it here, as a problem, and close the connection.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const kind = clientErrorKind(error.code);
    const appError = new AppError(
      kind,
      kind === ErrorKinds.malformedRequest ? 'The HTTP request could not be parsed.' : kind.title,
    );
    const requestId = randomUUID();
    const body = JSON.stringify(problemBody(appError, requestId));
    socket.write(
      `HTTP/1.1 ${kind.status} ${STATUS_CODES[kind.status]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-cache\r\nConnection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}
