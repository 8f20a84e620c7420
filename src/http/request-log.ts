/**
 * One log line per request, written when the answer is sent: Fastify's own
 * logging writes two ("incoming request", "request completed"), which halves
 * what a terminal shows and doubles what a log store keeps. The message reads
 * on its own in a terminal; the fields are for log queries.
 */
import {
  LogController,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { redactUrl } from './url-tokens.ts';

/** The logger is pino's, which says whether a level is written. */
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {
    // Said once, when the answer is sent.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    // At LOG_LEVEL=warn and above a request costs no line at all (the bench runs so).
    if (!error && !(reply.log as LevelAware).isLevelEnabled('info')) return;
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    const fields = { req: request, res: { statusCode: reply.statusCode }, responseTime: ms };
    const line = `${request.method} ${redactUrl(request.url)} ${reply.statusCode} ${ms} ms`;
    // An error here is one of sending the answer (a dropped connection), not of the route.
    if (error) reply.log.error({ ...fields, err: error }, line);
    else reply.log.info(fields, line);
  }
}
