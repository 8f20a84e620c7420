/**
 * Rooms, memberships and read markers: each shape described once, here. The
 * same schema validates requests, types the code, serializes responses and is
 * published in the OpenAPI document (as for messages, see message.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Author, MessageId, Room as RoomName, Timestamp } from './message.ts';

export { RoomName };

/** A subject in a path or a body follows the rules of `author`; `.` and `..` cannot be addressed. */
export const Subject = Type.String({
  ...Author,
  pattern: `(?!^\\.\\.?$)${Author.pattern}`,
  description: '1-64 code points, not blank, no control characters, not `.` or `..`.',
  'x-rule': 'must be 1-64 code points, not blank, no control characters, not . or ..',
  examples: ['ada'],
});

export const Visibility = Type.Union([Type.Literal('public'), Type.Literal('private')], {
  description:
    '`public`: every signed-in subject reads it; `private`: its members and admins only.',
  'x-rule': "must be 'public' or 'private'",
});
export type Visibility = Static<typeof Visibility>;

export const MAX_TOPIC_CODE_POINTS = 256;
export const Topic = Type.String({
  maxLength: MAX_TOPIC_CODE_POINTS,
  pattern: '^[^\\p{Cc}\\p{Cs}]*$',
  description: '0-256 code points, no control characters.',
  'x-rule': 'must be at most 256 code points without control characters (or invalid Unicode)',
});

export const Role = Type.Union([Type.Literal('member'), Type.Literal('owner')], {
  description: '`owner` manages the room and its memberships.',
  'x-rule': "must be 'member' or 'owner'",
});
export type Role = Static<typeof Role>;

const RoomVersion = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: '1 on create, +1 on every update that changes something.',
});

export const RoomSchema = Type.Object(
  {
    name: RoomName,
    visibility: Visibility,
    topic: Topic,
    createdBy: Type.Union([Author, Type.Null()], {
      description:
        'The subject that created it; null for rooms created with auth off through PUT and for rooms that held messages before rooms were resources.',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: RoomVersion,
  },
  { $id: 'Room', additionalProperties: false, description: 'A chat room.' },
);
export type Room = Static<typeof RoomSchema>;

export const PutRoomBody = Type.Object(
  {
    visibility: Type.Optional(Visibility),
    topic: Type.Optional(Topic),
    name: Type.Optional(Type.String({ description: 'Must equal the name in the path.' })),
    createdBy: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'Must equal the stored value.' }),
    ),
    createdAt: Type.Optional(Timestamp),
    updatedAt: Type.Optional(Timestamp),
    version: Type.Optional(RoomVersion),
  },
  {
    $id: 'PutRoom',
    additionalProperties: false,
    description:
      'A field left out keeps its value (defaults: public, empty topic, on creation only). The other fields as last read may be sent: `name`, `createdBy`, `createdAt` must equal the stored ones (400); a `version` or `updatedAt` that is not current is a 409.',
  },
);
export type PutRoomBody = Static<typeof PutRoomBody>;

export const MembershipSchema = Type.Object(
  {
    room: RoomName,
    subject: Subject,
    role: Role,
    joinedAt: Timestamp,
  },
  {
    $id: 'Membership',
    additionalProperties: false,
    description: "A subject's membership of a room.",
  },
);
export type Membership = Static<typeof MembershipSchema>;

export const PutMembershipBody = Type.Object(
  {
    role: Type.Optional(Role),
    room: Type.Optional(Type.String({ description: 'Must equal the room in the path.' })),
    subject: Type.Optional(Type.String({ description: 'Must equal the subject in the path.' })),
    joinedAt: Type.Optional(Timestamp),
  },
  {
    $id: 'PutMembership',
    additionalProperties: false,
    description:
      'A role left out keeps its value (`member` for a new membership). The other fields as read may be sent; they must match (400).',
  },
);
export type PutMembershipBody = Static<typeof PutMembershipBody>;

/** Counting unread messages stops here: `100` means 100 or more. */
export const MAX_UNREAD = 100;

const MarkerVersion = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: '0 while the marker was never set, +1 on every change.',
});

export const ReadMarkerSchema = Type.Object(
  {
    room: RoomName,
    subject: Subject,
    lastRead: Type.Union([MessageId, Type.Null()], {
      description: 'The id of the last message this subject has seen; null when never set.',
    }),
    unread: Type.Integer({
      minimum: 0,
      maximum: MAX_UNREAD,
      description:
        "The room's messages after lastRead written by others; counting stops at 100 (100 means 100 or more).",
    }),
    version: MarkerVersion,
  },
  {
    $id: 'ReadMarker',
    additionalProperties: false,
    description: "A subject's read position in a room.",
  },
);
export type ReadMarker = Static<typeof ReadMarkerSchema>;

export const PutReadMarkerBody = Type.Object(
  {
    lastRead: MessageId,
    room: Type.Optional(Type.String({ description: 'Must equal the room in the path.' })),
    subject: Type.Optional(Type.String({ description: 'Must equal the subject in the path.' })),
    unread: Type.Optional(Type.Integer({ description: 'Ignored: it is derived.' })),
    version: Type.Optional(MarkerVersion),
  },
  {
    $id: 'PutReadMarker',
    additionalProperties: false,
    description:
      '`lastRead` names a message of this room. Without If-Match the marker only moves forward; with If-Match it is set as sent. `room` and `subject`, if sent, must match (400); a `version` that is not current is a 409; `unread` is ignored.',
  },
);
export type PutReadMarkerBody = Static<typeof PutReadMarkerBody>;

export const LastMessageSchema = Type.Object(
  { id: MessageId, author: Author, createdAt: Timestamp },
  {
    $id: 'LastMessage',
    additionalProperties: false,
    description: "A room's newest message, in short.",
  },
);
export type LastMessage = Static<typeof LastMessageSchema>;

export const UserRoomSchema = Type.Object(
  {
    ...RoomSchema.properties,
    role: Role,
    lastMessage: Type.Union([LastMessageSchema, Type.Null()]),
    lastRead: Type.Union([MessageId, Type.Null()]),
    unread: ReadMarkerSchema.properties.unread,
  },
  {
    $id: 'UserRoom',
    additionalProperties: false,
    description: 'A room of a subject: the room, the role, its newest message, the read marker.',
  },
);
export type UserRoom = Static<typeof UserRoomSchema>;
