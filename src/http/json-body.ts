/**
 * Bodies are parsed here, strictly: invalid UTF-8 is a 400 (Fastify's default
 * parser would silently replace it with U+FFFD), prototype-poisoning keys are
 * refused, nesting deeper than MAX_JSON_DEPTH is refused (whatever walks a
 * body later, a fingerprint or a validator, may recurse), and any non-JSON
 * media type is a 415 once the body has been read (so an oversized body is
 * still a 413, as the precedence says).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError, ErrorKinds } from '../errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Arrays and objects inside one another; the API's bodies are flat objects (depth 1). */
export const MAX_JSON_DEPTH = 32;

function malformed(detail: string): AppError {
  return new AppError(ErrorKinds.malformedBody, detail);
}

function unsupported(): AppError {
  return new AppError(
    ErrorKinds.unsupportedMediaType,
    'Send the body as application/json (UTF-8).',
  );
}

export function parseJsonBody(bytes: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw malformed('The body is not valid UTF-8.');
  }
  if (text.trim() === '') throw malformed('The body is empty; send a JSON object.');
  let body: unknown;
  try {
    body = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    if (error instanceof SyntaxError)
      throw malformed(`The body is not valid JSON: ${error.message}`);
    throw malformed('The body is not valid JSON or uses a forbidden key (__proto__, constructor).');
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw malformed(`The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  return body;
}

/** For valid JSON text: do brackets outside strings nest deeper than `limit`? One pass, no recursion. */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

function charsetIsUtf8(request: FastifyRequest): boolean {
  const header = request.headers['content-type'] ?? '';
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(header);
  return match === null || /^utf-?8$/i.test(match[1]!);
}

export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const json = (
    request: FastifyRequest,
    body: Buffer,
    done: (err: Error | null, body?: unknown) => void,
  ) => {
    if (isAbsent(request, body)) {
      done(null, undefined);
      return;
    }
    if (!charsetIsUtf8(request)) {
      done(unsupported());
      return;
    }
    try {
      done(null, parseJsonBody(body));
    } catch (error) {
      done(error as Error);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, json);
  app.addContentTypeParser(/^application\/[\w.+-]+\+json$/i, { parseAs: 'buffer' }, json);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) =>
    isAbsent(request, body) ? done(null, undefined) : done(unsupported()),
  );
}

/** POST and PUT need a JSON body; a request without any Content-Type is a 415 too. */
export function assertJsonContentType(request: FastifyRequest): void {
  if (request.headers['content-type'] === undefined) throw unsupported();
}

/**
 * The config of a route whose body may be left out (its document says so too,
 * see openapi.ts): no bytes at all, whatever the Content-Type (clients that
 * set one by default send it with an empty body too), is no body.
 */
export const OPTIONAL_BODY = Object.freeze({ optionalBody: true });

function isAbsent(request: FastifyRequest, body: Buffer | string): boolean {
  const config = request.routeOptions.config as { optionalBody?: boolean };
  return body.length === 0 && config.optionalBody === true;
}

/**
 * For a PUT whose every field is optional: no body at all stands for `{}`. A
 * body that is sent must still be JSON (the parsers above refuse the rest).
 */
export function absentBodyIsEmpty(request: FastifyRequest): void {
  // Only undefined: a parsed body is never undefined, and a JSON `null` must stay a 400.
  if (request.body === undefined) request.body = {};
}
