/**
 * GET /api/events: the change log as Server-Sent Events, in commit order.
 * `Last-Event-ID` (or `?since=`) resumes after a change: the missed changes
 * are replayed from the log, then the stream goes live with no gap and no
 * duplicate (see event-connection.ts for how). Authentication, when on, is
 * the /api onRequest hook's business, like for every other /api route.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { AppError, ErrorKinds } from '../errors.ts';
import type { Change } from '../domain/change.ts';
import type { ChangeFeed } from '../domain/change-feed.ts';
import type { AccessLookup } from '../domain/room-access.ts';
import type { RoomGate } from '../domain/room-gate.ts';
import { Room } from '../domain/message.ts';
import { EventConnection, REPLAY_BATCH } from './event-connection.ts';
import { ClientSlots } from './client-slots.ts';
import { openingFrame, type ResetReason } from './event-frames.ts';
import { COMMON_PROBLEMS, header, problemResponses } from './responses.ts';

export interface EventStreamOptions {
  readonly feed: ChangeFeed;
  /** `?room=` of a private room the caller may not read is a 403. */
  readonly gate: RoomGate;
  /** Who may read which room, kept in step with the feed. */
  readonly access: AccessLookup;
  /** Open streams allowed on this instance; one more is a 503. */
  readonly maxStreams: number;
  /** Open streams one client (token subject, else address) may hold; one more is a 429. */
  readonly maxStreamsPerClient: number;
  /** A heartbeat comment at least this often; also how long a client may leave a full buffer unread. */
  readonly heartbeatMs: number;
}

/** How long a browser waits before reconnecting after the stream ends. */
const RETRY_MS = 2000;
/** Retry-After (seconds) when a stream cap is reached. */
const FULL_RETRY_AFTER = 5;
const SEQ = /^[0-9]{1,16}$/;

const EventsQuerystring = Type.Object(
  {
    room: Type.Optional({ ...Room, description: 'Only changes of this room.' }),
    since: Type.Optional(
      Type.String({
        description:
          'A change sequence number (decimal digits): replay every change after it, then go live. Ignored when Last-Event-ID is sent.',
        examples: ['42'],
      }),
    ),
    access_token: Type.Optional(
      Type.String({
        description:
          'The bearer JWT, for clients that cannot send headers (a browser EventSource); only with authentication on, and never together with an Authorization header (400). Answers to such a URL are `Cache-Control: private, no-cache`.',
      }),
    ),
  },
  { description: 'Unknown parameters are ignored.' },
);
type EventsQuerystring = Static<typeof EventsQuerystring>;

const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      description:
        'The last change sequence number the client has (EventSource sends it when it reconnects); wins over ?since.',
    }),
  ),
});

const STREAM_DESCRIPTION = `Server-Sent Events, one per change, in commit order:

    id: 42
    event: message.created      (or message.updated, message.deleted)
    data: {"id":"...","room":"general","author":"...","content":"...",...}

\`data\` is the message after the change (for a delete: as it was). The other kinds, in the same
sequence: \`room.created\`, \`room.updated\` (data: the Room), \`member.added\`, \`member.updated\`,
\`member.removed\` (data: the Membership; \`member.removed\` adds \`removedBy\`, the subject that removed
it, equal to \`subject\` when it left, null with auth off) and \`read-marker.updated\` (data: the
ReadMarker without \`unread\`). \`id\` is the change sequence number, strictly increasing. A \`retry:\`
hint opens the stream; a comment line comes at least every 15 s. With \`?room=\`, every change of that
room and nothing else; comments also carry \`id: <latest change sequence>\`, as they do whenever changes
were left out.

With auth on, a change goes out only if the stream's subject may read its room when it is sent, except:
a \`member.removed\` about the subject itself always reaches it; a \`room.updated\` that made a public room
private reaches every stream; a \`read-marker.updated\` reaches only its subject (while it may read
the room). \`?room=\` of a private room the subject may not read is a 403, and such a stream ends after
the change that takes its access away (a room that comes into being private included). When the requested
point is older than the log keeps (EVENTS_RETENTION_HOURS, default 7 days) or newer than its
latest change, the first event is \`event: reset\` with \`id: <latest>\` and
\`data: {"latest":<n>,"reason":"purged"|"ahead"}\`: reload the list. A client that leaves
256 KiB unread for a heartbeat interval is dropped; it reconnects with Last-Event-ID. One client
(the token's subject, else its address) may hold EVENTS_MAX_STREAMS_PER_CLIENT open streams
(default 20); one more is a 429.

The \`x-events\` extension of this operation maps every event type to the schema of its \`data\`;
\`x-item-schema\` on the media type names \`StreamEvent\`, one event as a client parses it.`;

function parseSeq(raw: string, where: { header: string } | { parameter: string }): number {
  const value = Number(raw);
  if (!SEQ.test(raw) || !Number.isSafeInteger(value)) {
    const name = 'header' in where ? where.header : where.parameter;
    const detail = `${name} must be a change sequence number (decimal digits)`;
    throw new AppError(ErrorKinds.validation, detail, { errors: [{ ...where, detail }] });
  }
  return value;
}

/** Where the client resumes: the header wins over ?since; an empty header counts as absent. */
function requestedSince(lastEventId: string | undefined, since: string | undefined) {
  if (lastEventId !== undefined && lastEventId !== '') {
    return parseSeq(lastEventId, { header: 'last-event-id' });
  }
  if (since !== undefined) return parseSeq(since, { parameter: 'since' });
  return undefined;
}

/** What the streams of this instance are doing (for metrics and tests). */
export interface EventStreamStats {
  readonly open: number;
  /** Streams waiting for their client to read. */
  readonly stalled: number;
  /** Streams dropped since start because their client stopped reading. */
  readonly dropped: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    eventStreams: () => EventStreamStats;
  }
}

export function registerEventStream(app: FastifyInstance, options: EventStreamOptions): void {
  const { feed } = options;
  const open = new Set<EventConnection>();
  const perClient = new ClientSlots({
    name: 'events',
    what: 'open event streams',
    max: options.maxStreamsPerClient,
    retryAfterSeconds: FULL_RETRY_AFTER,
  });
  let dropped = 0;
  app.decorate('eventStreams', () => ({
    open: open.size,
    stalled: [...open].filter((c) => c.stalled).length,
    dropped,
  }));

  // Streams never end by themselves: end them before the server waits for its connections,
  // and refuse new ones from then on (a request already past routing may still arrive).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const connection of [...open]) connection.end();
  });

  app.get<{ Querystring: EventsQuerystring; Headers: Static<typeof EventsHeaders> }>(
    '/api/events',
    {
      exposeHeadRoute: false,
      schema: {
        operationId: 'streamEvents',
        summary: 'Stream every change (Server-Sent Events)',
        description: STREAM_DESCRIPTION,
        tags: ['events'],
        querystring: EventsQuerystring,
        headers: EventsHeaders,
        response: {
          200: {
            description: 'The change stream; headers are sent at once.',
            headers: {
              'cache-control': header('no-cache, no-transform (private, ... with a URL token)'),
              'x-accel-buffering': header('no: proxies must not buffer the stream'),
            },
            content: {
              'text/event-stream': {
                schema: { type: 'string', description: 'SSE frames, see above.' },
              },
            },
          },
          ...problemResponses(400, 403, ...COMMON_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const since = requestedSince(request.headers['last-event-id'], request.query.since);
      if (closing) throw shuttingDown();
      const { room } = request.query;
      const actor = request.actor;
      if (room !== undefined) await options.gate.assertNotHidden(room, actor);
      // One client's streams first: a client that opens too many is told so, not everyone.
      const release = perClient.take(request, reply);
      if (open.size >= options.maxStreams) {
        release();
        throw new AppError(
          ErrorKinds.storeUnavailable,
          `Too many open event streams (${options.maxStreams}); retry later.`,
          { headers: { 'retry-after': String(FULL_RETRY_AFTER) } },
        );
      }
      const res = reply.raw;
      const forget = () => {
        open.delete(connection);
        release();
      };
      const connection = new EventConnection({
        res,
        feed,
        room,
        actor,
        access: options.access,
        heartbeatMs: options.heartbeatMs,
        stallTimeoutMs: options.heartbeatMs,
        onError: (err) => request.log.error({ err }, 'event stream failed'),
        onClosed: forget,
        onDropped: () => {
          dropped++;
          request.log.info('event stream dropped: the client stopped reading');
        },
      });
      open.add(connection);
      try {
        const { start, first, reset, told } = await startingPoint(feed, since);
        if (res.destroyed) {
          // The client left while the log was read.
          forget();
          return reply.hijack();
        }
        // The server began to shut down while the log was read.
        if (connection.closed) throw shuttingDown();
        openStream(reply);
        connection.begin(start, first, reset, told);
      } catch (error) {
        forget();
        throw error;
      }
      return reply;
    },
  );
}

function shuttingDown(): AppError {
  return new AppError(ErrorKinds.storeUnavailable, 'The service is shutting down.', {
    headers: { 'retry-after': '1' },
  });
}

interface StartingPoint {
  /** The change the client already has (all at or below it). */
  readonly start: number;
  /** The first changes after it, already read from the log. */
  readonly first: readonly Change[];
  /** Set when the client cannot resume from `since`: it reloads, and the stream goes on from `latest`. */
  readonly reset?: { readonly latest: number; readonly reason: ResetReason };
  /** Whether the client holds `start` as its last event id (it sent it); else a heartbeat tells it. */
  readonly told: boolean;
}

/** Where a stream starts: live from the feed's head, or after `since` (read from the log now, so a failing store is a 503). */
async function startingPoint(feed: ChangeFeed, since: number | undefined): Promise<StartingPoint> {
  if (since === undefined) {
    // Live from the last committed change, not from the feed's head: the feed may not have
    // read a change committed just before this request yet, and it is not "new" to this client.
    const { latest } = await feed.bounds();
    // The access view is the feed's: let it catch up with what this request's checks read.
    await feed.reached(latest);
    return { start: Math.max(latest, feed.head), first: [], told: false };
  }
  // Read before the bounds: a purge that removed part of what was read then shows in them.
  const first = await feed.changesSince(since, REPLAY_BATCH);
  const { latest, purgedThrough } = await feed.bounds();
  await feed.reached(latest);
  if (since > latest) {
    return { start: since, first: [], reset: { latest, reason: 'ahead' }, told: true };
  }
  if (since < purgedThrough) {
    return { start: since, first: [], reset: { latest, reason: 'purged' }, told: true };
  }
  return { start: since, first, told: true };
}

/** Sends the headers (including those hooks set on the reply) and the opening frame right away. */
function openStream(reply: FastifyReply): void {
  reply.hijack();
  const res = reply.raw;
  const privateCache = String(reply.getHeader('cache-control') ?? '').includes('private');
  const headers = {
    ...reply.getHeaders(),
    'content-type': 'text/event-stream',
    'cache-control': `${privateCache ? 'private, ' : ''}no-cache, no-transform`,
    'x-accel-buffering': 'no',
  };
  res.socket?.setNoDelay(true);
  res.socket?.setTimeout(0);
  res.writeHead(200, headers as Record<string, string | string[] | number>);
  res.write(openingFrame(RETRY_MS));
}
