/** The reaction endpoints: a schema and a short handler each. Routes see the service, never a store. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MAX_AUTHOR_CODE_POINTS, MAX_PAGE_LIMIT, MessageId } from '../domain/message.ts';
import {
  DEFAULT_REACTOR_LIMIT,
  Emoji,
  MAX_EMOJI_CODE_POINTS,
  MAX_REACTION_BATCH,
  type MessageReactions,
  PutReactionBody,
  ReactionSchema,
} from '../domain/reaction.ts';
import type { ReactionService } from '../domain/reaction-service.ts';
import { Subject } from '../domain/room.ts';
import { AppError, ErrorKinds } from '../errors.ts';
import { OPTIONAL_BODY, absentBodyIsEmpty } from './json-body.ts';
import { JSON_TYPE } from './object-lists.ts';
import {
  MessageReactionsListSchema,
  ReactionListSchema,
  ReactionSummaryListSchema,
} from './list-bodies.ts';
import { COMMON_PROBLEMS, header, problemResponses } from './responses.ts';

export interface ReactionRoutesOptions {
  readonly reactions: ReactionService;
}

const BASE = '/api/messages/:id/reactions';
const Id = Type.String({
  description: 'The message id (any case); an id of any other shape is a 404.',
});
const MessageParams = Type.Object({ id: Id });
const EmojiParams = Type.Object({ id: Id, emoji: Emoji });
const ReactionParams = Type.Object({ id: Id, emoji: Emoji, subject: Subject });

const UNREADABLE =
  'A message that does not exist, or in a private room the caller cannot read, is a 404.';

const ReactorsQuerystring = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_LIMIT,
        description: `At most this many reactions (1-1000, default ${DEFAULT_REACTOR_LIMIT}).`,
      }),
    ),
    after: Type.Optional({
      ...Subject,
      description:
        'Only the reactions made after this subject’s (exclusive). A subject that has no such reaction (it was removed since the page was read) is a 400 naming `after`: its place is gone, and going on from a guess could skip or repeat reactors; start again from the first page.',
    }),
  },
  { description: 'Unknown parameters are ignored.' },
);

const BatchQuerystring = Type.Object(
  {
    messageId: Type.Array(MessageId, {
      minItems: 1,
      maxItems: MAX_REACTION_BATCH,
      description:
        'Repeatable, 1-100 message ids: the summaries of a whole page of messages in one request.',
    }),
  },
  { description: 'Unknown parameters are ignored.' },
);

export const reactionRoutes: FastifyPluginAsyncTypebox<ReactionRoutesOptions> = async (
  app,
  opts,
) => {
  const { reactions } = opts;

  app.get(
    BASE,
    {
      schema: {
        operationId: 'getMessageReactions',
        summary: "A message's reactions, counted by emoji",
        description: `\`[{emoji, count, me}]\`, ordered by each emoji's earliest current reaction; \`me\` is whether the caller's subject is among the reactors (always false with auth off). ${UNREADABLE}`,
        tags: ['reactions'],
        params: MessageParams,
        response: {
          200: {
            description: 'The emoji of the message, counted',
            content: { 'application/json': { schema: ReactionSummaryListSchema } },
          },
          ...problemResponses(404, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => reply.send(await reactions.summary(request.params.id, request.actor)),
  );

  app.get(
    `${BASE}/:emoji`,
    {
      schema: {
        operationId: 'listReactors',
        summary: 'The reactions with one emoji, in the order they were made',
        description: `The emoji is percent-encoded in the path. Paged: \`limit\` (default ${DEFAULT_REACTOR_LIMIT}), \`after=<subject>\`, and \`Link: <...>; rel="next"\` when \`limit\` cut the page short. An emoji nobody reacted with is an empty list. ${UNREADABLE}`,
        tags: ['reactions'],
        params: EmojiParams,
        querystring: ReactorsQuerystring,
        response: {
          200: {
            description: 'The reactions, in the order they were made',
            headers: { link: header('<...>; rel="next" when limit cut the page short (RFC 8288)') },
            content: { 'application/json': { schema: ReactionListSchema } },
          },
          ...problemResponses(400, 404, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { id, emoji } = request.params;
      const limit = request.query.limit ?? DEFAULT_REACTOR_LIMIT;
      const after = request.query.after;
      const page = await reactions.reactors(
        id,
        emoji,
        { limit, ...(after === undefined ? {} : { after }) },
        request.actor,
      );
      const last = page.items.at(-1);
      if (page.more && last !== undefined) {
        const params = new URLSearchParams({ limit: String(limit), after: last.subject });
        const path = `/api/messages/${last.messageId}/reactions/${encodeURIComponent(emoji)}`;
        reply.header('link', `<${path}?${params.toString()}>; rel="next"`);
      }
      return reply.send(page.items);
    },
  );

  app.put(
    `${BASE}/:emoji/:subject`,
    {
      schema: {
        operationId: 'putReaction',
        summary: 'React to a message',
        description: `201 when added, 200 when that subject already had it (nothing changes, no event). No body is needed (and then no Content-Type); a body, if sent, is the JSON object \`{}\` (a field is a 400, a body that is not JSON a 415). With auth on, \`{subject}\` must be the token's subject (403). A message holds at most 20 different emoji: adding a 21st is a 409 (another subject's reaction with one of the 20 is fine). The emoji is kept exactly as sent. The message itself is untouched (version, updatedAt, ETag). ${UNREADABLE}`,
        tags: ['reactions'],
        params: ReactionParams,
        body: PutReactionBody,
        response: {
          200: {
            description: 'The subject had it already: the reaction as stored',
            content: { 'application/json': { schema: ReactionSchema } },
          },
          201: {
            description: 'Added',
            content: { 'application/json': { schema: ReactionSchema } },
          },
          ...problemResponses(400, 403, 404, 409, 413, 415, 507, ...COMMON_PROBLEMS),
        },
      },
      config: { ...OPTIONAL_BODY },
      preValidation: async (request) => absentBodyIsEmpty(request),
    },
    async (request, reply) => {
      const { id, emoji, subject } = request.params;
      const outcome = await reactions.put(id, emoji, subject, request.actor);
      return reply.code(outcome.created ? 201 : 200).send(outcome.reaction);
    },
  );

  app.delete(
    `${BASE}/:emoji/:subject`,
    {
      schema: {
        operationId: 'removeReaction',
        summary: 'Remove a reaction',
        description: `Answers with the reaction as it was; 404 when there was none. With auth on, \`{subject}\` must be the token's subject, or the caller an admin (403). ${UNREADABLE}`,
        tags: ['reactions'],
        params: ReactionParams,
        response: {
          200: {
            description: 'The reaction as it was when removed',
            content: { 'application/json': { schema: ReactionSchema } },
          },
          ...problemResponses(400, 403, 404, 507, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { id, emoji, subject } = request.params;
      return reply.send(await reactions.remove(id, emoji, subject, request.actor));
    },
  );

  app.get(
    '/api/reactions',
    {
      schema: {
        operationId: 'listReactionSummaries',
        summary: 'The reaction summaries of several messages at once',
        description:
          '`messageId` repeatable, 1-100 (else a 400 naming it): `[{messageId, reactions: [{emoji, count, me}]}]` in the order asked, a repeated id once at its first place. Messages that do not exist, or that the caller cannot read, are left out. Read in one store operation (one statement on either engine).',
        tags: ['reactions'],
        querystring: BatchQuerystring,
        response: {
          200: {
            description: 'The summaries, in the order asked',
            content: { 'application/json': { schema: MessageReactionsListSchema } },
          },
          ...problemResponses(400, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const text = await reactions.summaries(request.query.messageId, request.actor);
      return reply.type(JSON_TYPE).send(text as unknown as MessageReactions[]);
    },
  );
};

const REACTION_PATH = /^\/api\/messages\/[^/?#]+\/reactions\/([^?#]*)/;
const SEGMENTS = [
  { name: 'emoji', maxCodePoints: MAX_EMOJI_CODE_POINTS },
  { name: 'subject', maxCodePoints: MAX_AUTHOR_CODE_POINTS },
] as const;

/**
 * For a path the router could not take (bad percent-encoding, or a segment
 * longer than its limit): a 400 when it is a reaction path whose emoji or
 * subject is not valid percent-encoded UTF-8 (%ED%A0%80 is a lone surrogate)
 * or too long, as the route's own rule would say: a malformed parameter, not
 * a missing thing. Undefined for any other path (an undecodable message id is
 * a 404, as an id of any shape).
 */
export function malformedReactionPath(url: string): AppError | undefined {
  const match = REACTION_PATH.exec(url);
  if (match === null) return undefined;
  const segments = match[1]!.split('/');
  for (const [i, { name, maxCodePoints }] of SEGMENTS.entries()) {
    const segment = segments[i];
    if (segment === undefined) break;
    let detail: string | undefined;
    try {
      if ([...decodeURIComponent(segment)].length > maxCodePoints) {
        detail = `${name} must be at most ${maxCodePoints} code points`;
      }
    } catch {
      detail = `${name} must be valid percent-encoded UTF-8`;
    }
    if (detail !== undefined) {
      return new AppError(ErrorKinds.validation, detail, {
        errors: [{ pointer: `#/${name}`, detail }],
      });
    }
  }
  return undefined;
}
