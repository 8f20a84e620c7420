/**
 * Logs (pino): JSON lines, or readable lines (pino-pretty) when standard
 * output is a terminal, a person reading them as they come. Tokens and
 * cookies never reach a log line.
 */
import { createRequire } from 'node:module';
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
  if (stream !== undefined) return pino(options, stream as pino.DestinationStream);
  return pino(options, process.stdout.isTTY ? prettyStream() : undefined);
}

/**
 * pino-pretty in this process, writing synchronously: no worker thread, and
 * nothing is lost when the process exits. Loaded only for a terminal.
 */
function prettyStream(): pino.DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({
    sync: true,
    colorize: true,
    translateTime: 'SYS:HH:MM:ss.l',
    // The request line and the start line say it all in their message (request-log.ts, server.ts).
    ignore: 'pid,hostname,req,res,responseTime,version,store,storeLocation,address,envFile',
    singleLine: true,
  });
}
