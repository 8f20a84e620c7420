/** The bodies of the list endpoints, named so that the document and generated clients call them by name. */
import { Type } from '@sinclair/typebox';
import { MessageSchema } from '../domain/message.ts';
import { RevisionSchema } from '../domain/revision.ts';
import {
  MessageReactionsSchema,
  ReactionSchema,
  ReactionSummarySchema,
} from '../domain/reaction.ts';
import { MembershipSchema, RoomSchema, UserRoomSchema } from '../domain/room.ts';

export const MessageListSchema = Type.Array(MessageSchema, {
  $id: 'MessageList',
  description: 'Messages in the requested order.',
});

export const RoomListSchema = Type.Array(RoomSchema, {
  $id: 'RoomList',
  description: 'Rooms, by name.',
});

export const MembershipListSchema = Type.Array(MembershipSchema, {
  $id: 'MembershipList',
  description: 'Memberships of a room, by subject.',
});

export const UserRoomListSchema = Type.Array(UserRoomSchema, {
  $id: 'UserRoomList',
  description: 'The rooms of a subject, latest activity first.',
});

export const RevisionListSchema = Type.Array(RevisionSchema, {
  $id: 'RevisionList',
  description: "A message's versions, oldest first.",
});

export const ReactionListSchema = Type.Array(ReactionSchema, {
  $id: 'ReactionList',
  description: 'The reactions with one emoji, in the order they were made.',
});

export const ReactionSummaryListSchema = Type.Array(ReactionSummarySchema, {
  $id: 'ReactionSummaryList',
  description: "A message's emoji, counted, ordered by each emoji's earliest current reaction.",
});

export const MessageReactionsListSchema = Type.Array(MessageReactionsSchema, {
  $id: 'MessageReactionsList',
  description:
    'The reaction summaries of the asked messages, in the order asked (a repeated id once, at its first place); messages that do not exist or that the caller cannot read are left out.',
});
