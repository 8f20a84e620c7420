/** Structured JSON logs (pino). Tokens and cookies never reach a log line. */
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.ts';
import { redactUrl } from './http/url-tokens.ts';

export function createLogger(level: LogLevel, stream?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.ip,
      }),
      err: pino.stdSerializers.err,
    },
  };
  return stream === undefined ? pino(options) : pino(options, stream as pino.DestinationStream);
}
