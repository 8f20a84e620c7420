/** A subject's read marker in a room: GET and PUT, each a schema and a short handler. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PutReadMarkerBody, ReadMarkerSchema, RoomName, Subject } from '../domain/room.ts';
import type { RoomService } from '../domain/room-service.ts';
import {
  etagOf,
  ifMatchPrecondition,
  readPreconditions,
  singleHeader,
} from './conditional-requests.ts';
import { assertJsonContentType } from './json-body.ts';
import { COMMON_PROBLEMS, header, problemResponses } from './responses.ts';

export interface ReadMarkerRoutesOptions {
  readonly rooms: RoomService;
}

const PATH = '/api/rooms/:name/read-markers/:subject';
const MarkerParams = Type.Object({ name: RoomName, subject: Subject });
const ETAG = header('The strong validator "<version>" of the marker (0 while never set).');

export const readMarkerRoutes: FastifyPluginAsyncTypebox<ReadMarkerRoutesOptions> = async (
  app,
  opts,
) => {
  const { rooms } = opts;

  app.get(
    PATH,
    {
      schema: {
        operationId: 'getReadMarker',
        summary: "Get a subject's read marker in a room",
        description:
          "Its own marker, or any with the admin role (403 otherwise). Anyone who may read the room has one: `lastRead` is null and `version` 0 while it was never set. `unread` counts the room's messages after `lastRead` written by others, up to 100 (100 means 100 or more). The ETag is for `If-Match` on PUT; there is no 304, as `unread` changes without the version. `If-Match` (a list or `*`, strong comparison) that does not match is a 412.",
        tags: ['read markers'],
        params: MarkerParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        response: {
          200: {
            description: 'The marker',
            headers: { etag: ETAG },
            content: { 'application/json': { schema: ReadMarkerSchema } },
          },
          ...problemResponses(400, 403, 404, 412, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { name, subject } = request.params;
      // No If-None-Match here (no 304: see the description), so only If-Match is judged.
      const judge = readPreconditions(singleHeader(request.headers['if-match']), undefined);
      const marker = await rooms.getMarker(name, subject, request.actor);
      judge(marker.version);
      return reply.header('etag', etagOf(marker.version)).send(marker);
    },
  );

  app.put(
    PATH,
    {
      schema: {
        operationId: 'putReadMarker',
        summary: 'Move a read marker (or, with If-Match, set it)',
        description:
          'Only the subject itself sets its marker (403). `lastRead` names a message of this room that exists now (else a 400 with pointer `#/lastRead`). Without `If-Match` the marker only moves forward: an older id leaves it as it is (200, unchanged). With `If-Match` (a list or `*`, strong comparison; 412 when it does not match) it is set as sent, backwards too (mark as unread). `room` and `subject`, if sent, must match (400); a `version` that is not current is a 409.',
        tags: ['read markers'],
        params: MarkerParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
        body: PutReadMarkerBody,
        response: {
          200: {
            description: 'The marker as it is now',
            headers: { etag: ETAG },
            content: { 'application/json': { schema: ReadMarkerSchema } },
          },
          ...problemResponses(400, 403, 404, 409, 412, 413, 415, 507, ...COMMON_PROBLEMS),
        },
      },
      preValidation: async (request) => assertJsonContentType(request),
    },
    async (request, reply) => {
      const { name, subject } = request.params;
      const precondition = ifMatchPrecondition(singleHeader(request.headers['if-match']));
      const { marker } = await rooms.putMarker(
        name,
        subject,
        request.body,
        request.actor,
        precondition,
      );
      return reply.header('etag', etagOf(marker.version)).send(marker);
    },
  );
};
