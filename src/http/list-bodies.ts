/** The bodies of the list endpoints, named so that the document and generated clients call them by name. */
import { Type } from '@sinclair/typebox';
import { MessageSchema } from '../domain/message.ts';
import { RevisionSchema } from '../domain/revision.ts';
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
