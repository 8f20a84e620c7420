/**
 * Each request's logger, made when the request first writes a line. Fastify
 * gives every request a pino child bound to its request id, and pino writes
 * the bindings out as JSON when the child is made: about 3% of the CPU of a
 * /healthz and 1.5-2% of a GET by id (profiled), while at LOG_LEVEL=warn nearly
 * every request writes nothing. A line at a level that is not written costs
 * one level check; the first line that is written makes the child, so every
 * line still carries `reqId`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, Logger } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Args = Parameters<Logger['info']>;

class RequestLogger implements FastifyBaseLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  get level(): LevelWithSilentOrString {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#made().level = level;
  }

  /** pino's own check (request-log.ts asks it before building a line). */
  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level);
  }

  fatal(...args: Args): void {
    this.#write('fatal', args);
  }

  error(...args: Args): void {
    this.#write('error', args);
  }

  warn(...args: Args): void {
    this.#write('warn', args);
  }

  info(...args: Args): void {
    this.#write('info', args);
  }

  debug(...args: Args): void {
    this.#write('debug', args);
  }

  trace(...args: Args): void {
    this.#write('trace', args);
  }

  silent(): void {
    // Writes nothing, as pino's.
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options);
  }

  #write(level: Level, args: Args): void {
    if (!this.isLevelEnabled(level)) return;
    this.#made()[level](...args);
  }

  #made(): Logger {
    this.#child ??= this.#parent.child(this.#bindings);
    return this.#child;
  }
}

/**
 * Fastify's `childLoggerFactory`. A route with a log level or serializers of
 * its own gets pino's child at once (none has one today).
 */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) {
    return logger.child(bindings, options);
  }
  return new RequestLogger(logger as Logger, bindings);
}
