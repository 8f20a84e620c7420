/**
 * One log line per request, written when the answer is sent: Fastify's own
 * logging writes two ("incoming request", "request completed"), which halves
 * what a terminal shows and doubles what a log store keeps. The message reads
 * on its own in a terminal; the fields are for log queries.
 */
import type { FastifyInstance } from 'fastify';
import { redactUrl } from './url-tokens.ts';

export function registerRequestLog(app: FastifyInstance): void {
  // A callback hook: an async one costs a promise and a microtask turn on every request.
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    request.log.info(
      { req: request, res: { statusCode: reply.statusCode }, responseTime: ms },
      `${request.method} ${redactUrl(request.url)} ${reply.statusCode} ${ms.toFixed(1)} ms`,
    );
    done();
  });
}
