/**
 * What the event stream sends, for the OpenAPI document: the `data` schema of
 * every event type, and one named union of all the events. SSE has no place in
 * OpenAPI, so the operation also carries them in an `x-events` extension
 * (event type -> data schema), which docs/events.md describes.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { ChangeKind } from '../domain/change.ts';
import { Author, MessageSchema } from '../domain/message.ts';
import { ReactionSchema } from '../domain/reaction.ts';
import { MembershipSchema, ReadMarkerSchema, RoomSchema } from '../domain/room.ts';

export const MemberRemovedSchema = Type.Object(
  {
    ...MembershipSchema.properties,
    removedBy: Type.Union([Author, Type.Null()], {
      description:
        'The subject that removed it: equal to `subject` when it left; null with authentication off.',
    }),
  },
  {
    $id: 'MemberRemoved',
    additionalProperties: false,
    description: 'The data of `member.removed`: the membership as it was, and who removed it.',
  },
);

export const ReadMarkerChangeSchema = Type.Object(
  Type.Omit(ReadMarkerSchema, ['unread']).properties,
  {
    $id: 'ReadMarkerChange',
    additionalProperties: false,
    description:
      'The data of `read-marker.updated`: the marker without `unread` (which depends on the moment, not on the change).',
  },
);

export const ResetSchema = Type.Object(
  {
    latest: Type.Integer({ minimum: 0, description: 'The latest change sequence number.' }),
    reason: Type.Union([Type.Literal('purged'), Type.Literal('ahead')], {
      description:
        '`purged`: the requested point is older than the log keeps; `ahead`: it is newer than its latest change.',
    }),
  },
  {
    $id: 'Reset',
    additionalProperties: false,
    description:
      'The data of `reset`, the first event when the stream cannot resume where asked: reload, then go on from `latest`.',
  },
);

/** Every event type and the schema of its `data`; a new change kind must be added here. */
export const EVENT_DATA: Readonly<Record<ChangeKind | 'reset', TSchema>> = {
  'message.created': MessageSchema,
  'message.updated': MessageSchema,
  'message.deleted': MessageSchema,
  'room.created': RoomSchema,
  'room.updated': RoomSchema,
  'member.added': MembershipSchema,
  'member.updated': MembershipSchema,
  'member.removed': MemberRemovedSchema,
  'read-marker.updated': ReadMarkerChangeSchema,
  'reaction.added': ReactionSchema,
  'reaction.removed': ReactionSchema,
  reset: ResetSchema,
};

const EventId = Type.String({
  pattern: '^[0-9]+$',
  description:
    'The change sequence number (for `reset`: the latest one); send it as Last-Event-ID.',
});

/** One event of the stream as a client parses it: `id`, `event` and `data` (JSON-decoded). */
export const StreamEventSchema = Type.Union(
  Object.entries(EVENT_DATA).map(([event, data]) =>
    Type.Object({ id: EventId, event: Type.Literal(event), data }, { additionalProperties: false }),
  ),
  {
    $id: 'StreamEvent',
    description:
      'One Server-Sent Event of GET /api/events, its `data` decoded from JSON; `event` tells which schema `data` has.',
  },
);

/** The `x-events` extension of GET /api/events: each event type with the schema of its data. */
export const EVENTS_EXTENSION = Object.fromEntries(
  Object.entries(EVENT_DATA).map(([event, data]) => [event, { data }]),
);
