/**
 * The message and the shapes around it. Each shape is described once, here;
 * the same schema validates requests, types the code, serializes responses
 * and is published in the OpenAPI document.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { SearchQuery } from './search-text.ts';

/** Any 8-4-4-4-12 hex string is a well-formed id (matched case-insensitively). */
export const ID_PATTERN =
  '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';
const idRegExp = new RegExp(ID_PATTERN);

export function isWellFormedId(value: string): boolean {
  return idRegExp.test(value);
}

export const DEFAULT_ROOM = 'general';
export const MAX_CONTENT_CODE_POINTS = 4000;
export const MAX_AUTHOR_CODE_POINTS = 64;

// Patterns use Unicode property escapes and are compiled with the `u` flag
// (JSON Schema 2020-12 semantics), so a lone surrogate is a code point of
// category Cs and can be refused like a control character.
const NOT_BLANK = '(?=[\\s\\S]*[^\\p{White_Space}])';
const AUTHOR_PATTERN = `^${NOT_BLANK}[^\\p{Cc}\\p{Cs}]*$`;
const CONTENT_PATTERN = `^${NOT_BLANK}[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\p{Cs}]*$`;

// `x-rule` is the sentence a validation failure shows; `description` documents the field.
export const MessageId = Type.String({
  pattern: ID_PATTERN,
  'x-rule': 'must be an id: 8-4-4-4-12 hex digits',
  description: 'A UUIDv7, lowercase canonical form when returned.',
  examples: ['019a2b3c-4d5e-7f00-8a1b-2c3d4e5f6a7b'],
});

export const Room = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^(?!\\.\\.?$)[A-Za-z0-9_.-]{1,64}$',
  description: '1-64 characters of A-Z a-z 0-9 _ . -, not `.` or `..` (a room name: see Room).',
  'x-rule': 'must be 1-64 characters of A-Z a-z 0-9 _ . -, not . or ..',
  examples: ['general'],
});

export const Author = Type.String({
  minLength: 1,
  maxLength: MAX_AUTHOR_CODE_POINTS,
  pattern: AUTHOR_PATTERN,
  description: '1-64 code points, not blank, no control characters.',
  'x-rule': 'must not be blank or contain control characters (or invalid Unicode)',
  examples: ['ada'],
});

export const Content = Type.String({
  minLength: 1,
  maxLength: MAX_CONTENT_CODE_POINTS,
  pattern: CONTENT_PATTERN,
  description:
    '1-4000 code points, not blank, no control characters other than tab, LF and CR. Stored and returned exactly as sent.',
  'x-rule':
    'must not be blank or contain control characters other than tab, LF and CR (or invalid Unicode)',
  examples: ['Hello, world'],
});

export const Timestamp = Type.String({
  format: 'date-time',
  description: 'RFC 3339 UTC time with millisecond precision.',
  examples: ['2026-11-21T10:00:00.123Z'],
});

export const Version = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: '1 on create, +1 on every edit that changes content.',
});

/** The message a message answers: fixed at create, kept when that message is deleted. */
export const ReplyTo = Type.Union([MessageId, Type.Null()], {
  description:
    'The id of the message this one answers (a message of the same room that existed when this one was created), or null. Fixed after create; it stays when that message is deleted.',
  'x-rule': 'must be an id: 8-4-4-4-12 hex digits, or null',
});

export const MessageSchema = Type.Object(
  {
    id: MessageId,
    room: Room,
    author: Author,
    content: Content,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Version,
    replyTo: ReplyTo,
  },
  { $id: 'Message', additionalProperties: false, description: 'A chat message.' },
);
export type Message = Static<typeof MessageSchema>;

export const CreateMessageBody = Type.Object(
  {
    author: Type.Optional(Author),
    content: Content,
    room: Type.Optional(Room),
    replyTo: Type.Optional(
      Type.Union([MessageId, Type.Null()], {
        description:
          'The id (any case) of a message of the same room to answer; null or left out for none. A message that is not of this room (or not stored) is a 400.',
        'x-rule': 'must be an id: 8-4-4-4-12 hex digits, or null',
      }),
    ),
  },
  {
    $id: 'CreateMessage',
    additionalProperties: false,
    description:
      '`author` is required unless authentication is on (then it comes from the token). Any other field is refused.',
  },
);
export type CreateMessageBody = Static<typeof CreateMessageBody>;

export const UpdateMessageBody = Type.Object(
  {
    content: Content,
    id: Type.Optional(MessageId),
    room: Type.Optional(Room),
    author: Type.Optional(Type.String({ description: 'Must equal the stored author.' })),
    createdAt: Type.Optional(Timestamp),
    updatedAt: Type.Optional(Timestamp),
    version: Type.Optional(Version),
    replyTo: Type.Optional(
      Type.Union([MessageId, Type.Null()], { description: 'Must equal the stored replyTo.' }),
    ),
  },
  {
    $id: 'UpdateMessage',
    additionalProperties: false,
    description:
      'The new `content`, optionally with the other fields as last read: `id`, `room`, `author`, `createdAt`, `replyTo` must equal the stored ones (else 400); a `version` or `updatedAt` that is not current is a 409.',
  },
);
export type UpdateMessageBody = Static<typeof UpdateMessageBody>;

export const ListOrder = Type.Unsafe<'asc' | 'desc'>({
  type: 'string',
  enum: ['asc', 'desc'],
  'x-rule': "must be 'asc' or 'desc'",
});
export type ListOrder = Static<typeof ListOrder>;

export const MAX_LIST_IDS = 100;
export const MAX_PAGE_LIMIT = 1000;

/** A normalized list query, as the service and the stores see it. */
export interface ListQuery {
  readonly room?: string;
  readonly limit?: number;
  readonly order: ListOrder;
  /** Exclusive lower bound, lowercase. */
  readonly after?: string;
  /** Exclusive upper bound, lowercase. */
  readonly before?: string;
  /** Only these ids, lowercase, deduplicated. */
  readonly ids?: readonly string[];
  /** Only messages of rooms this subject may read (public, or a member of). Absent: no such condition. */
  readonly readableBy?: string;
  /** Only messages whose normalized content contains every term (search-text.ts). */
  readonly q?: SearchQuery;
  /** Only the direct replies to this message (lowercase id). */
  readonly replyTo?: string;
}

/** What a create needs besides what the client sent: the store writes exactly this. */
export interface NewMessage {
  readonly id: string;
  readonly room: string;
  readonly author: string;
  readonly content: string;
  readonly createdAt: string;
  /** Lowercase; the store checks, in the create's transaction, that it is a message of the same room. Absent: null. */
  readonly replyTo?: string | null;
}
