/**
 * Reactions: one subject's emoji on one message. Each shape described once,
 * here; the same schema validates requests, types the code, serializes
 * responses and is published in the OpenAPI document (see message.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import { MessageId, Room, Timestamp } from './message.ts';
import { Subject } from './room.ts';

/** A message holds at most this many different emoji; one more is a 409. */
export const MAX_EMOJI_PER_MESSAGE = 20;
/** `GET /api/reactions` takes at most this many `messageId`s. */
export const MAX_REACTION_BATCH = 100;
/** The reactors of one emoji per page when `limit` is not given. */
export const DEFAULT_REACTOR_LIMIT = 100;
export const MAX_EMOJI_CODE_POINTS = 32;

// Compiled with the `u` flag (see message.ts): lengths count code points, and a lone
// surrogate (category Cs) is refused like a control character. Kept exactly as sent: no
// normalization, so 👍 and 👍🏽 are two emoji, and so are two spellings of one character.
export const Emoji = Type.String({
  minLength: 1,
  maxLength: MAX_EMOJI_CODE_POINTS,
  pattern: '^(?!\\.\\.?$)[^\\p{White_Space}\\p{Cc}\\p{Cs}]*$',
  description:
    'An emoji such as 👍 or a name such as `:party:`: 1-32 code points, no White_Space, no control characters, not `.` or `..`. Percent-encoded in a path; kept exactly as sent (no normalization).',
  'x-rule': 'must be 1-32 code points without White_Space or control characters, not . or ..',
  examples: ['👍'],
});

export const ReactionSchema = Type.Object(
  {
    messageId: MessageId,
    room: Room,
    emoji: Emoji,
    subject: Subject,
    createdAt: Timestamp,
  },
  {
    $id: 'Reaction',
    additionalProperties: false,
    description: "One subject's emoji on one message.",
  },
);
export type Reaction = Static<typeof ReactionSchema>;

export const ReactionSummarySchema = Type.Object(
  {
    emoji: Emoji,
    count: Type.Integer({ minimum: 1, description: 'How many subjects reacted with it.' }),
    me: Type.Boolean({
      description: "Whether the caller's subject is among them (always false with auth off).",
    }),
  },
  {
    $id: 'ReactionSummary',
    additionalProperties: false,
    description: 'One emoji of a message, counted.',
  },
);
export type ReactionSummary = Static<typeof ReactionSummarySchema>;

export const MessageReactionsSchema = Type.Object(
  {
    messageId: MessageId,
    reactions: Type.Array(ReactionSummarySchema, {
      description: "Ordered by each emoji's earliest current reaction.",
    }),
  },
  {
    $id: 'MessageReactions',
    additionalProperties: false,
    description: "A message's reaction summary, as GET /api/reactions answers it.",
  },
);
export type MessageReactions = Static<typeof MessageReactionsSchema>;

export const PutReactionBody = Type.Object(
  {},
  {
    $id: 'PutReaction',
    additionalProperties: false,
    description:
      'No body is needed (and then no Content-Type); a body, if sent, is the JSON object `{}`: any field is a 400.',
  },
);
export type PutReactionBody = Static<typeof PutReactionBody>;
