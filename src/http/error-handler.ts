/**
 * The one place where errors become responses: every failure, ours or the
 * framework's, leaves as an RFC 9457 problem. Unknown paths are 404, known
 * paths with a trailing slash redirect, and known paths with an unsupported
 * method are 405 with Allow.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorKinds } from '../errors.ts';
import { PROBLEM_CONTENT_TYPE, problemBody, toAppError } from './problem.ts';
import type { RouteRegistry } from './route-registry.ts';
import { withoutTokens } from './url-tokens.ts';

export function registerErrorHandling(app: FastifyInstance, routes: RouteRegistry): void {
  app.setErrorHandler(
    (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
      const appError = toAppError(error);
      if (appError.status === 500) {
        request.log.error({ err: error, reqId: request.id }, 'request failed');
      } else if (appError.status > 500) {
        // An expected condition (store down, disk full, shutting down): one line, no stack,
        // so an outage does not flood the log.
        const cause = (appError.cause as Error | undefined)?.message;
        request.log.warn(
          { problem: appError.kind.type, detail: appError.detail, cause, reqId: request.id },
          'request not served',
        );
      } else {
        request.log.info(
          { problem: appError.kind.type, detail: appError.detail },
          'request refused',
        );
      }
      for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
      return reply
        .code(appError.status)
        .type(PROBLEM_CONTENT_TYPE)
        .send(problemBody(appError, String(request.id)));
    },
  );

  // Before routing matters: '/api/messages/' would otherwise match '/api/messages/:id'.
  // A callback hook (an async one costs a promise per request); it answers without done().
  app.addHook('onRequest', (request, reply, done) => {
    // Most paths do not end in a slash: told without splitting the URL (every request pays this).
    const url = request.url;
    const pathEnd = url.indexOf('?');
    if (url.charCodeAt((pathEnd === -1 ? url.length : pathEnd) - 1) !== SLASH) return done();
    const [path = '/', query] = splitUrl(url);
    if (path.length <= 1) return done();
    const target = path.replace(/\/+$/, '');
    if (target === '' || !routes.knows(target)) return done();
    const permanent = request.method === 'GET' || request.method === 'HEAD' ? 301 : 308;
    // Never echo a token: it would sit in a header that caches, proxies and logs keep.
    const location = withoutTokens(query === undefined ? target : `${target}?${query}`);
    reply.code(permanent).header('location', location).send();
  });

  app.setNotFoundHandler(async (request) => {
    const [path = '/'] = splitUrl(request.url);
    const allowed = routes.methodsFor(path);
    if (allowed !== undefined) {
      throw new AppError(ErrorKinds.methodNotAllowed, `${request.method} is not supported here.`, {
        headers: { allow: allowed.join(', ') },
      });
    }
    throw new AppError(ErrorKinds.notFound, 'No such path.');
  });
}

const SLASH = 0x2f;

function splitUrl(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at === -1 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}
