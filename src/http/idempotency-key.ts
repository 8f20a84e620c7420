/**
 * `Idempotency-Key` on POST /api/messages: claim the key before the request
 * is processed, replay a kept outcome, and keep this request's 2xx/4xx
 * outcome (or free the key after a 5xx) before the answer leaves.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorKinds } from '../errors.ts';
import { IDEMPOTENCY_KEY_PATTERN, type IdempotencyService } from '../messages/idempotency.ts';
import type { Message } from '../messages/message.ts';
import { etagOf, singleHeader } from './conditional-requests.ts';
import { PROBLEM_CONTENT_TYPE } from './problem.ts';

const HEADER = 'idempotency-key';
/** How long a 503 waits for its key to be freed (a healthy store takes a millisecond). */
const RELEASE_WAIT_MS = 250;

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

export function idempotencyHooks(service: IdempotencyService) {
  return {
    /** preValidation: after the body is parsed, before anything is done with it. */
    async claim(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
      const key = parseIdempotencyKey(singleHeader(request.headers[HEADER]));
      if (key === undefined) return;
      const scope = request.actor?.subject ?? '';
      const { claim, outcome } = await service.claim(scope, key, request.body);
      switch (outcome.kind) {
        case 'claimed':
          request.idempotency = { claim, settled: false };
          return;
        case 'in-flight':
          throw new AppError(
            ErrorKinds.idempotencyInFlight,
            'A request with this Idempotency-Key is still being processed; retry shortly.',
            { headers: { 'retry-after': '1' } },
          );
        case 'mismatch':
          throw new AppError(
            ErrorKinds.idempotencyKeyReuse,
            'This Idempotency-Key was used with a different body.',
          );
        case 'replay': {
          reply.header('idempotent-replayed', 'true');
          if (outcome.status === 201) {
            const message = JSON.parse(outcome.body) as Message;
            reply
              .header('location', `/api/messages/${message.id}`)
              .header('etag', etagOf(message.version));
          }
          const type =
            outcome.status >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json; charset=utf-8';
          // Sent as the exact text kept, so a replay is the first answer again.
          return reply.code(outcome.status).type(type).send(outcome.body);
        }
      }
    },

    /** onSend: keep a 2xx/4xx outcome that the store did not keep already; free the key after a 5xx. */
    async settle(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
      const state = request.idempotency;
      if (state === null || state.settled) return payload;
      state.settled = true;
      if (reply.statusCode >= 500) {
        // The key is freed before the answer leaves, so the client's retry runs again. After a
        // 503 the store may be what hangs: then the answer waits at most RELEASE_WAIT_MS more
        // (the release goes on in the background, and retries until it lands).
        const released = service.release(state.claim).catch(() => undefined);
        await (reply.statusCode === 503
          ? Promise.race([released, sleep(RELEASE_WAIT_MS, undefined, { ref: false })])
          : released);
      } else {
        await service.complete(state.claim, reply.statusCode, String(payload));
      }
      return payload;
    },

    /** onResponse: a request that died before onSend (e.g. the connection dropped) frees its key. */
    async cleanUp(request: FastifyRequest): Promise<void> {
      const state = request.idempotency;
      if (state === null || state.settled) return;
      state.settled = true;
      await service.release(state.claim).catch(() => undefined);
    },
  };
}
