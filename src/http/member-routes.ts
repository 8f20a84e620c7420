/** The membership endpoints of a room: a schema and a short handler each. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  MembershipSchema,
  PutMembershipBody,
  RoomName,
  Subject,
  type Membership,
} from '../domain/room.ts';
import type { RoomService } from '../domain/room-service.ts';
import { OPTIONAL_BODY, absentBodyIsEmpty } from './json-body.ts';
import {
  LIST_HEADERS,
  PageLimit,
  sendObjectList,
  type StreamedListOptions,
} from './object-lists.ts';
import { MembershipListSchema } from './list-bodies.ts';
import { COMMON_PROBLEMS, problemResponses } from './responses.ts';
import { RoomParams } from './room-routes.ts';

export interface MemberRoutesOptions {
  readonly rooms: RoomService;
  readonly lists: StreamedListOptions;
}

const BASE = '/api/rooms/:name/members';
const MemberParams = Type.Object({ name: RoomName, subject: Subject });

const MemberListQuerystring = Type.Object(
  {
    limit: Type.Optional(PageLimit),
    after: Type.Optional({
      ...Subject,
      description: 'Only members after this subject, by code point (exclusive).',
    }),
  },
  { description: 'Unknown parameters are ignored.' },
);

export const memberRoutes: FastifyPluginAsyncTypebox<MemberRoutesOptions> = async (app, opts) => {
  const { rooms } = opts;

  app.get(
    BASE,
    {
      schema: {
        operationId: 'listMembers',
        summary: "List a room's memberships, by subject (streamed when no limit is given)",
        description:
          'Ordered by subject, by code point. Paged and streamed as the room list is: `after`, `limit`, `Link: <...>; rel="next"`, `Event-Seq`. A private room the caller may not read is a 403.',
        tags: ['members'],
        params: RoomParams,
        querystring: MemberListQuerystring,
        response: {
          200: {
            description: 'The memberships, by subject',
            headers: LIST_HEADERS,
            content: { 'application/json': { schema: MembershipListSchema } },
          },
          ...problemResponses(400, 403, 404, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const { limit, after } = request.query;
      return sendObjectList<Membership>(
        request,
        reply,
        {
          limit,
          after,
          read: (from, max) =>
            rooms.listMembers(
              name,
              { limit: max, ...(from === undefined ? {} : { after: from }) },
              request.actor,
            ),
          keyOf: (membership) => membership.subject,
          nextUrl: (last, max) => {
            const params = new URLSearchParams({ limit: String(max), after: last });
            return `/api/rooms/${name}/members?${params.toString()}`;
          },
        },
        opts.lists,
      );
    },
  );

  app.get(
    `${BASE}/:subject`,
    {
      schema: {
        operationId: 'getMember',
        summary: "Get a subject's membership of a room",
        description: '404 when the subject is not a member (or there is no such room).',
        tags: ['members'],
        params: MemberParams,
        response: {
          200: {
            description: 'The membership',
            content: { 'application/json': { schema: MembershipSchema } },
          },
          ...problemResponses(400, 403, 404, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { name, subject } = request.params;
      return reply.send(await rooms.getMember(name, subject, request.actor));
    },
  );

  app.put(
    `${BASE}/:subject`,
    {
      schema: {
        operationId: 'putMember',
        summary: 'Add a member or set its role',
        description:
          "201 when added (role `member` unless given), 200 when changed or unchanged. A role left out keeps its value; no body at all is `{}`. The membership's other fields as read may be sent: they must match (400). Owners and admins add anyone and set roles; anyone may add themselves as `member` to a public room (join), and a member may re-send its own unchanged membership; anything else is a 403. Demoting the last owner of a room is a 409. A new member's read marker starts at the room's newest message.",
        tags: ['members'],
        params: MemberParams,
        body: PutMembershipBody,
        response: {
          200: {
            description: 'Changed or unchanged: the membership as it is now',
            content: { 'application/json': { schema: MembershipSchema } },
          },
          201: {
            description: 'Added',
            content: { 'application/json': { schema: MembershipSchema } },
          },
          ...problemResponses(400, 403, 404, 409, 413, 415, 507, ...COMMON_PROBLEMS),
        },
      },
      config: { ...OPTIONAL_BODY },
      preValidation: async (request) => absentBodyIsEmpty(request),
    },
    async (request, reply) => {
      const { name, subject } = request.params;
      const outcome = await rooms.putMember(name, subject, request.body, request.actor);
      return reply.code(outcome.created ? 201 : 200).send(outcome.membership);
    },
  );

  app.delete(
    `${BASE}/:subject`,
    {
      schema: {
        operationId: 'removeMember',
        summary: 'Remove a member (or leave)',
        description:
          'Answers with the membership as it was. Owners and admins remove anyone; a member removes itself (leave); else 403. 404 when not a member. Removing the last owner of a room is a 409.',
        tags: ['members'],
        params: MemberParams,
        response: {
          200: {
            description: 'The membership as it was when removed',
            content: { 'application/json': { schema: MembershipSchema } },
          },
          ...problemResponses(400, 403, 404, 409, 507, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { name, subject } = request.params;
      return reply.send(await rooms.removeMember(name, subject, request.actor));
    },
  );
};
