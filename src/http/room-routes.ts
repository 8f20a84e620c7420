/** The room endpoints: a schema and a short handler each. Routes see the room service, never a store. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PutRoomBody, RoomName, RoomSchema, Visibility, type Room } from '../domain/room.ts';
import type { RoomPreconditions, RoomService } from '../domain/room-service.ts';
import {
  CONDITIONAL_HEADERS,
  etagOf,
  ifMatchPrecondition,
  ifNoneMatchCondition,
  readPreconditions,
  singleHeader,
} from './conditional-requests.ts';
import { OPTIONAL_BODY, absentBodyIsEmpty } from './json-body.ts';
import {
  LIST_HEADERS,
  PageLimit,
  sendObjectList,
  type StreamedListOptions,
} from './object-lists.ts';
import { RoomListSchema } from './list-bodies.ts';
import { COMMON_PROBLEMS, header, problemResponses } from './responses.ts';

export interface RoomRoutesOptions {
  readonly rooms: RoomService;
  readonly lists: StreamedListOptions;
}

const BASE = '/api/rooms';
export const RoomParams = Type.Object({ name: RoomName });
const ETAG = header('The strong validator "<version>".');

const RoomListQuerystring = Type.Object(
  {
    limit: Type.Optional(PageLimit),
    after: Type.Optional({
      ...RoomName,
      description: 'Only rooms after this name, by code point (exclusive; need not be a room).',
    }),
    visibility: Type.Optional(Visibility),
  },
  { description: 'Unknown parameters are ignored.' },
);

export const roomRoutes: FastifyPluginAsyncTypebox<RoomRoutesOptions> = async (app, opts) => {
  const { rooms } = opts;

  app.get(
    BASE,
    {
      schema: {
        operationId: 'listRooms',
        summary: 'List the rooms the caller may read, by name (streamed when no limit is given)',
        description:
          'Ordered by name, by code point (`B` before `a`). Keyset paging: `after` is an exclusive bound, `limit` cuts the page and then `Link: <...>; rel="next"` points to the next one. Without `limit` every room is streamed in batches, as for messages (same per-client cap and stall timeout). `visibility` keeps only public or private rooms. `Event-Seq` is the last change committed before the read began.',
        tags: ['rooms'],
        querystring: RoomListQuerystring,
        response: {
          200: {
            description: 'The rooms, by name',
            headers: LIST_HEADERS,
            content: { 'application/json': { schema: RoomListSchema } },
          },
          ...problemResponses(400, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { limit, after, visibility } = request.query;
      const filter = visibility === undefined ? {} : { visibility };
      return sendObjectList<Room>(
        request,
        reply,
        {
          limit,
          after,
          read: (from, max) =>
            rooms.list(
              { ...filter, limit: max, ...(from === undefined ? {} : { after: from }) },
              request.actor,
            ),
          keyOf: (room) => room.name,
          nextUrl: (last, max) => {
            const params = new URLSearchParams({ limit: String(max), after: last });
            if (visibility !== undefined) params.set('visibility', visibility);
            return `${BASE}?${params.toString()}`;
          },
        },
        opts.lists,
      );
    },
  );

  app.get(
    `${BASE}/:name`,
    {
      schema: {
        operationId: 'getRoom',
        summary: 'Get one room',
        description:
          'A private room the caller may not read is a 403. `If-Match` (a list or `*`, strong comparison) that does not match the current ETag is a 412; then `If-None-Match` (a list or `*`, weak comparison) that matches it gives 304.',
        tags: ['rooms'],
        params: RoomParams,
        headers: CONDITIONAL_HEADERS,
        response: {
          200: {
            description: 'The room',
            headers: { etag: ETAG },
            content: { 'application/json': { schema: RoomSchema } },
          },
          304: {
            // 'null': the document shows no body for a 304.
            type: 'null',
            description: 'Not modified: If-None-Match matches the current ETag',
            headers: { etag: ETAG },
          },
          ...problemResponses(400, 403, 404, 412, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      // Parsed before the lookup: a malformed header is a 400 even for a room that does not exist.
      const notModified = readPreconditions(
        singleHeader(request.headers['if-match']),
        singleHeader(request.headers['if-none-match']),
      );
      const room = await rooms.get(request.params.name, request.actor);
      reply.header('etag', etagOf(room.version));
      if (notModified(room.version)) return reply.code(304).send();
      return reply.send(room);
    },
  );

  app.put(
    `${BASE}/:name`,
    {
      schema: {
        operationId: 'putRoom',
        summary: 'Create or update a room',
        description:
          "Creates the room (201, with Location; with authentication on, the caller becomes its owner) or updates it (200; owners and admins only, else 403). A field left out keeps its value; defaults (`public`, empty topic) apply on creation only; no body at all is `{}`. The room's other fields as last read may be sent: `name`, `createdBy`, `createdAt` that differ are a 400, a `version` or `updatedAt` that is not the current one a 409. `If-Match` (a list or `*`, strong comparison) that does not match is a 412, also when there is no room; `If-None-Match` (a list or `*`, weak comparison) that matches the room's ETag is a 412: `*` makes the PUT create-only. An update that changes nothing keeps the version and produces no event. Rooms are not deleted: DELETE is a 405.",
        tags: ['rooms'],
        params: RoomParams,
        headers: Type.Object({
          'if-match': Type.Optional(Type.String()),
          'if-none-match': Type.Optional(
            Type.String({ description: '`*`: create the room, never update it.' }),
          ),
        }),
        body: PutRoomBody,
        response: {
          200: {
            description: 'Updated (or unchanged): the room as it is now',
            headers: { etag: ETAG },
            content: { 'application/json': { schema: RoomSchema } },
          },
          201: {
            description: 'Created',
            headers: { location: header('/api/rooms/{name}'), etag: ETAG },
            content: { 'application/json': { schema: RoomSchema } },
          },
          ...problemResponses(400, 403, 409, 412, 413, 415, 507, ...COMMON_PROBLEMS),
        },
      },
      config: { ...OPTIONAL_BODY },
      preValidation: async (request) => absentBodyIsEmpty(request),
    },
    async (request, reply) => {
      const { name } = request.params;
      const outcome = await rooms.put(name, request.body, request.actor, {
        ...ifMatch(singleHeader(request.headers['if-match'])),
        ...ifNoneMatch(singleHeader(request.headers['if-none-match'])),
      });
      reply.header('etag', etagOf(outcome.room.version));
      if (outcome.created) reply.code(201).header('location', `${BASE}/${name}`);
      return reply.send(outcome.room);
    },
  );

  // No DELETE: rooms are not deleted. The central error layer answers it with 405 and
  // `Allow` (as any method a path lacks), and the document lists no operation that could
  // only fail.
};

/** If-None-Match on a PUT: a 412 when it matches the room's ETag (`*`: when the room exists). */
function ifNoneMatch(value: string | undefined): Pick<RoomPreconditions, 'ifNoneMatch'> {
  return value === undefined ? {} : { ifNoneMatch: ifNoneMatchCondition(value) };
}

function ifMatch(value: string | undefined): Pick<RoomPreconditions, 'ifMatch'> {
  const precondition = ifMatchPrecondition(value);
  return precondition === undefined ? {} : { ifMatch: precondition };
}
