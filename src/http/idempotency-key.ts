/**
 * `Idempotency-Key` on POST /api/messages: the HTTP adapter of the domain's
 * IdempotencyService, which owns the key's whole life. One hook per phase:
 * claim (or replay) before validation, settle before the answer leaves,
 * abandon when a request ended without one.
 *
 * The hooks take callbacks and return at once when there is nothing to do
 * (most creates carry no key): an async hook costs a promise and a microtask
 * turn per request, which the CPU profile of POST showed.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError, ErrorKinds } from '../errors.ts';
import { IDEMPOTENCY_KEY_PATTERN, type IdempotencyService } from '../domain/idempotency.ts';
import type { Message } from '../domain/message.ts';
import type { StoredResponse } from '../domain/idempotency-store.ts';
import { etagOf, singleHeader } from './conditional-requests.ts';
import { PROBLEM_CONTENT_TYPE } from './problem.ts';

const HEADER = 'idempotency-key';

/** The key, with a structured-field string's quotes removed (`"abc"` means `abc`). */
export function parseIdempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let key = raw.trim();
  const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(key);
  if (quoted !== null) key = quoted[1]!.replace(/\\(["\\])/g, '$1');
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    const detail = 'Idempotency-Key must be 1-255 printable ASCII characters';
    throw new AppError(ErrorKinds.validation, detail, { errors: [{ header: HEADER, detail }] });
  }
  return key;
}

/** Sends a kept answer again, as the exact text kept, so a replay is the first answer again. */
function replay(reply: FastifyReply, kept: StoredResponse): FastifyReply {
  reply.header('idempotent-replayed', 'true');
  if (kept.status === 201) {
    const message = JSON.parse(kept.body) as Message;
    reply.header('location', `/api/messages/${message.id}`).header('etag', etagOf(message.version));
  }
  const type = kept.status >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json; charset=utf-8';
  return reply.code(kept.status).type(type).send(kept.body);
}

export function idempotencyHooks(service: IdempotencyService) {
  /** True when it answered the request itself (a replay). */
  async function claim(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const key = parseIdempotencyKey(singleHeader(request.headers[HEADER]));
    if (key === undefined) return false;
    const result = await service.claim(request.actor?.subject ?? '', key, request.body);
    if (result.kind === 'replay') {
      replay(reply, result.response);
      return true;
    }
    request.idempotency = result.held;
    return false;
  }

  return {
    /** preValidation: after the body is parsed, before anything is done with it. */
    claim(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
      if (request.headers[HEADER] === undefined) return done();
      // A hook that answered does not call done(): the request goes no further.
      claim(request, reply).then((answered) => (answered ? undefined : done()), done);
    },

    /** onSend: the answer is known; the service keeps it or frees the key. */
    settle(
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload?: unknown) => void,
    ): void {
      const held = request.idempotency;
      if (held === null || !held.open) return done(null, payload);
      service.settle(held, reply.statusCode, String(payload)).then(
        () => done(null, payload),
        (error: Error) => done(error),
      );
    },

    /** onResponse: a request that ended before onSend (the connection dropped) frees its key. */
    abandon(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
      const held = request.idempotency;
      if (held === null || !held.open) return done();
      service.abandon(held).then(() => done(), done);
    },
  };
}
