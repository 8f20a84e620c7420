/** The message endpoints: a schema and a short handler each. Routes see the service, never a store. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { MAX_KEPT_OUTCOME_BYTES, type IdempotencyService } from '../domain/idempotency.ts';
import {
  CreateMessageBody,
  MAX_PAGE_LIMIT,
  MessageSchema,
  UpdateMessageBody,
  type Message,
} from '../domain/message.ts';
import { authorRuleErrors, type MessageService } from '../domain/message-service.ts';
import { DEFAULT_REVISION_LIMIT } from '../domain/revision.ts';
import {
  CONDITIONAL_HEADERS,
  etagOf,
  readPreconditions,
  singleHeader,
  writePrecondition,
} from './conditional-requests.ts';
import { idempotencyHooks } from './idempotency-key.ts';
import { ClientSlots } from './client-slots.ts';
import { assertJsonContentType } from './json-body.ts';
import { listStream } from './list-stream.ts';
import { ListQuerystring, nextPageUrl, toListRequest } from './list-query.ts';
import { withMoreFailures } from './problem.ts';
import { MessageListSchema, RevisionListSchema } from './list-bodies.ts';
import { JSON_TYPE, LIST_HEADERS } from './object-lists.ts';
import { COMMON_PROBLEMS, header, problemResponses } from './responses.ts';

export interface MessageRoutesOptions {
  readonly service: MessageService;
  readonly idempotency: IdempotencyService;
  /** Lists without `limit` (streamed) one client may read at once; one more is a 429. */
  readonly maxStreamsPerClient: number;
  /** How long a streamed list may wait for its reader to take a chunk before it is cut. */
  readonly stallTimeoutMs: number;
}

const BASE = '/api/messages';
const IdParams = Type.Object({
  id: Type.String({ description: 'The message id (any case); an id of any other shape is a 404.' }),
});
const ETAG = header('The strong validator "<version>".');
const RevisionQuerystring = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_LIMIT,
        description: `At most this many versions (1-1000, default ${DEFAULT_REVISION_LIMIT}).`,
      }),
    ),
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Only versions after this one (exclusive).',
      }),
    ),
  },
  { description: 'Unknown parameters are ignored.' },
);
const MESSAGE_LIST_HEADERS = {
  ...LIST_HEADERS,
  link: header(
    '<...>; rel="next" when limit cut the page short (RFC 8288); an `around` page may also carry <...>; rel="prev" (on past its first message, in the other order).',
  ),
};

export const messageRoutes: FastifyPluginAsyncTypebox<MessageRoutesOptions> = async (app, opts) => {
  const { service } = opts;
  const idempotency = idempotencyHooks(opts.idempotency);
  const streamedLists = new ClientSlots({
    name: 'lists',
    what: 'lists without limit at once',
    max: opts.maxStreamsPerClient,
    retryAfterSeconds: 1,
  });

  app.post(
    BASE,
    {
      schema: {
        operationId: 'createMessage',
        summary: 'Create a message',
        description:
          "Stores a new message and answers 201 with it, its Location and ETag. `room` defaults to `general`. `replyTo` answers a message of the same room that is stored at that moment (else a 400 naming it, judged after the room's access rule). With an `Idempotency-Key` (a quoted structured-field string means the same key), a retry with the same body replays the first answer (`Idempotent-Replayed: true`), a different body is a 422, and a retry while the first is in flight is a 409. Only 2xx and 4xx outcomes are kept (24 hours at least; an answer over " +
          String(MAX_KEPT_OUTCOME_BYTES / 1024) +
          ' KiB is not kept, its key is freed, and problems stay far below that); after a 5xx the key is free again.',
        tags: ['messages'],
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              description:
                '1-255 printable ASCII characters; retries with the same key and body replay the first answer.',
            }),
          ),
        }),
        body: CreateMessageBody,
        response: {
          201: {
            description: 'Created (or, with Idempotent-Replayed: true, the first answer replayed)',
            headers: {
              location: header('/api/messages/{id}'),
              etag: ETAG,
              'idempotent-replayed': header('true when this is a replay of a kept answer'),
            },
            content: { 'application/json': { schema: MessageSchema } },
          },
          ...problemResponses(400, 403, 409, 413, 415, 422, 507, ...COMMON_PROBLEMS),
        },
      },
      // The 400 for a body that fails its schema is made in the handler, so that it also
      // names the author rule's failure (which depends on who asks): one entry per failure.
      attachValidation: true,
      preValidation: [jsonContentTypeHook, idempotency.claim],
      onSend: idempotency.settle,
      onResponse: idempotency.abandon,
    },
    async (request, reply) => {
      if (request.validationError !== undefined) {
        throw withMoreFailures(
          request.validationError,
          authorRuleErrors(request.body, request.actor),
        );
      }
      const message = await service.create(
        request.body,
        request.actor,
        request.idempotency ?? undefined,
      );
      return reply
        .code(201)
        .header('location', `${BASE}/${message.id}`)
        .header('etag', etagOf(message.version))
        .send(message);
    },
  );

  app.get(
    BASE,
    {
      schema: {
        operationId: 'listMessages',
        summary: 'List messages, oldest first (streamed when no limit is given)',
        description:
          'Keyset paging on the id (with `q`, over the messages that contain every term: see the parameter): `after`/`before` are exclusive bounds (a well-formed id that is not stored works too), `order` picks the direction, `limit` cuts the page and then `Link: <...>; rel="next"` points to the next page in the same order. `around=<id>` answers the page around a message instead (see the parameter; it may carry `rel="next"` and `rel="prev"`). Without `limit` every matching message is streamed in batches, read as the client takes them; a store failure after the first byte, or a client that takes nothing for LIST_STALL_TIMEOUT_MS (default 15 s), aborts the connection before the closing bracket. One client (token subject, else address) reads at most LIST_MAX_STREAMS_PER_CLIENT (default 8) lists without `limit` at once; one more is a 429. `Event-Seq` is the last change committed before the read began: resume `GET /api/events?since=` from it.',
        tags: ['messages'],
        querystring: ListQuerystring,
        response: {
          200: {
            description: 'The messages in the requested order',
            headers: MESSAGE_LIST_HEADERS,
            content: { 'application/json': { schema: MessageListSchema } },
          },
          ...problemResponses(400, 403, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const asked = toListRequest(request.query);
      if (asked.around !== undefined) {
        const query = await service.scoped(asked.query, request.actor);
        const { page, next, prev } = await service.aroundPage(query, asked.around);
        reply.header('event-seq', String(page.latestSeq));
        const links: string[] = [];
        if (next !== undefined) links.push(`<${nextPageUrl(BASE, query, next)}>; rel="next"`);
        if (prev !== undefined) {
          // Object.assign, not a spread: see bounded() in around-page.ts.
          const other = Object.assign({}, query, {
            order: query.order === 'asc' ? ('desc' as const) : ('asc' as const),
          });
          links.push(`<${nextPageUrl(BASE, other, prev)}>; rel="prev"`);
        }
        if (links.length > 0) reply.header('link', links.join(', '));
        return reply.type(JSON_TYPE).send(`[${page.json}]` as unknown as Message[]);
      }
      // Before any read: a client past its cap of streamed lists costs the store nothing.
      if (asked.query.limit === undefined) {
        reply.raw.once('close', streamedLists.take(request, reply));
      }
      const query = await service.scoped(asked.query, request.actor);
      if (query.limit !== undefined) {
        const page = await service.listPage({ ...query, limit: query.limit });
        reply.header('event-seq', String(page.latestSeq));
        if (page.more && page.lastId !== undefined) {
          reply.header('link', `<${nextPageUrl(BASE, query, page.lastId)}>; rel="next"`);
        }
        // The stored JSON of each message, joined: no objects built, nothing serialized again.
        return reply.type(JSON_TYPE).send(`[${page.json}]` as unknown as Message[]);
      }
      // Everything: streamed in keyset batches. The first batch is read before
      // the status goes out, so a store that is down gets a proper 503; a
      // failure after that aborts the connection before the closing bracket.
      const batches = service.stream(query);
      const first = await batches.next();
      if (first.done !== true) reply.header('event-seq', String(first.value.latestSeq));
      const body = listStream(first.done === true ? undefined : first.value, batches, {
        res: reply.raw,
        stallTimeoutMs: opts.stallTimeoutMs,
        onCut: () => request.log.info('list cut: the client stopped reading'),
      });
      // A stream bypasses the response schema (the type provider cannot know that).
      return reply.type(JSON_TYPE).send(body as unknown as Message[]);
    },
  );

  app.get(
    `${BASE}/:id`,
    {
      schema: {
        operationId: 'getMessage',
        summary: 'Get one message',
        description:
          'Ids match case-insensitively; an id of any shape that is not stored is a 404. `If-Match` (a list or `*`, strong comparison) that does not match the current ETag is a 412; then `If-None-Match` (a list or `*`, weak comparison) that matches it gives 304 (RFC 9110 section 13.2.2).',
        tags: ['messages'],
        params: IdParams,
        headers: CONDITIONAL_HEADERS,
        response: {
          200: {
            description: 'The message',
            headers: { etag: ETAG },
            content: { 'application/json': { schema: MessageSchema } },
          },
          304: {
            // 'null': the document shows no body for a 304.
            type: 'null',
            description: 'Not modified: If-None-Match matches the current ETag',
            headers: { etag: ETAG },
          },
          ...problemResponses(400, 404, 412, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const notModified = readPreconditions(
        singleHeader(request.headers['if-match']),
        singleHeader(request.headers['if-none-match']),
      );
      const message = await service.get(request.params.id, request.actor);
      reply.header('etag', etagOf(message.version));
      if (notModified(message.version)) {
        return reply.code(304).send();
      }
      // The stored JSON as it is: no object built, nothing serialized again.
      return reply.type(JSON_TYPE).send(message.json as unknown as Message);
    },
  );

  app.get(
    `${BASE}/:id/revisions`,
    {
      schema: {
        operationId: 'listRevisions',
        summary: "A message's versions, oldest first",
        description:
          'Version 1 is the content as created (`editedBy`: the author); each edit that changed the content added one, in the edit\'s own transaction (`editedBy`: the token\'s subject that made it, null with authentication off). A message edited before this service kept revisions answers from its current version on (`editedBy` null for that one). Paged by `after=<version>` and `limit`, with `Link: <...>; rel="next"` when more versions lie beyond. A 404 for a message that is not stored (deleted ones too) or that the caller may not read.',
        tags: ['messages'],
        params: IdParams,
        querystring: RevisionQuerystring,
        response: {
          200: {
            description: 'The versions, oldest first',
            headers: { link: header('<...>; rel="next" when limit cut the page short (RFC 8288)') },
            content: { 'application/json': { schema: RevisionListSchema } },
          },
          ...problemResponses(400, 404, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const limit = request.query.limit ?? DEFAULT_REVISION_LIMIT;
      const after = request.query.after ?? 0;
      const page = await service.revisions(request.params.id, { after, limit }, request.actor);
      const last = page.revisions.at(-1);
      if (page.more && last !== undefined) {
        const id = encodeURIComponent(request.params.id.toLowerCase());
        const next = `${BASE}/${id}/revisions?limit=${limit}&after=${last.version}`;
        reply.header('link', `<${next}>; rel="next"`);
      }
      return reply.send(page.revisions);
    },
  );

  app.put(
    `${BASE}/:id`,
    {
      schema: {
        operationId: 'updateMessage',
        summary: "Edit a message's content",
        description:
          'Only `content` can change. The body may carry the other fields as last read: `id`, `room`, `author`, `createdAt`, `replyTo` that differ are a 400 naming them, a `version` or `updatedAt` that is not the current one is a 409. The same content again changes nothing (same version and updatedAt, no event). `If-Match` (a list or `*`, strong comparison) that does not match, or `If-None-Match` (a list or `*`, weak comparison) that does, is a 412 and nothing changes.',
        tags: ['messages'],
        params: IdParams,
        headers: CONDITIONAL_HEADERS,
        body: UpdateMessageBody,
        response: {
          200: {
            description: 'The message as it is now (unchanged when the content was the same)',
            headers: { etag: ETAG },
            content: { 'application/json': { schema: MessageSchema } },
          },
          ...problemResponses(400, 403, 404, 409, 412, 413, 415, 507, ...COMMON_PROBLEMS),
        },
      },
      preValidation: async (request) => assertJsonContentType(request),
    },
    async (request, reply) => {
      const precondition = writePrecondition(
        singleHeader(request.headers['if-match']),
        singleHeader(request.headers['if-none-match']),
      );
      const message = await service.update(
        request.params.id,
        request.body,
        request.actor,
        precondition,
      );
      return reply.header('etag', etagOf(message.version)).send(message);
    },
  );

  app.delete(
    `${BASE}/:id`,
    {
      schema: {
        operationId: 'deleteMessage',
        summary: 'Delete a message',
        description:
          'Answers with the message as it was when deleted; afterwards GET, PUT and DELETE of the id are 404. `If-Match` and `If-None-Match` apply as for PUT.',
        tags: ['messages'],
        params: IdParams,
        headers: CONDITIONAL_HEADERS,
        response: {
          200: {
            description: 'The message as it was when deleted',
            content: { 'application/json': { schema: MessageSchema } },
          },
          ...problemResponses(400, 403, 404, 412, 507, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const precondition = writePrecondition(
        singleHeader(request.headers['if-match']),
        singleHeader(request.headers['if-none-match']),
      );
      return reply.send(await service.delete(request.params.id, request.actor, precondition));
    },
  );
};
/** A callback hook (see idempotency-key.ts for why). */
function jsonContentTypeHook(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  try {
    assertJsonContentType(request);
  } catch (error) {
    return done(error as Error);
  }
  done();
}
