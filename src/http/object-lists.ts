/**
 * Lists of rooms and memberships, answered as message lists are: with `limit`
 * one keyset page (`after=<key>`, `Link: rel="next"` when it was cut short);
 * without it every item, streamed in keyset batches read as the client takes
 * them. Either way `Event-Seq` is the change log's latest sequence in the
 * first read's snapshot.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_PAGE_LIMIT } from '../domain/message.ts';
import type { ObjectPage } from '../domain/room-store.ts';
import type { ClientSlots } from './client-slots.ts';
import { listStream } from './list-stream.ts';
import { EVENT_SEQ, header } from './responses.ts';

/** How many items one batch of a streamed list reads. */
export const OBJECT_STREAM_BATCH = 500;

export const PageLimit = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE_LIMIT,
  description: 'At most this many (1-1000); without it, every one is streamed.',
});

/** The headers of a list's 200, for the document. */
export const LIST_HEADERS = {
  'event-seq': header(
    'The last change committed before the read began: resume /api/events?since= from it.',
    EVENT_SEQ,
  ),
  link: header('<...>; rel="next" when limit cut the page short (RFC 8288)'),
};

export interface StreamedListOptions {
  /** Streamed lists one client may read at once (shared with every list of objects). */
  readonly slots: ClientSlots;
  /** How long a streamed list may wait for its reader to take a chunk before it is cut. */
  readonly stallTimeoutMs: number;
}

export interface ObjectListRequest<T> {
  readonly limit: number | undefined;
  readonly after: string | undefined;
  /** One read: at most `limit` items after `after`, in key order. */
  readonly read: (after: string | undefined, limit: number) => Promise<ObjectPage<T>>;
  /** The keyset key of an item (what `after=` takes). */
  readonly keyOf: (item: T) => string;
  /** The URL of the next page, after `last`, with the same filters and limit. */
  readonly nextUrl: (last: string, limit: number) => string;
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers the list (a page, or the whole list streamed); returns the reply to hand back to Fastify. */
export async function sendObjectList<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  list: ObjectListRequest<T>,
  options: StreamedListOptions,
): Promise<FastifyReply> {
  const { limit } = list;
  if (limit !== undefined) {
    const page = await list.read(list.after, limit);
    reply.header('event-seq', String(page.latestSeq));
    const last = page.items.at(-1);
    if (page.more && last !== undefined) {
      reply.header('link', `<${list.nextUrl(list.keyOf(last), limit)}>; rel="next"`);
    }
    return reply.send(page.items);
  }
  // Before any read: a client past its cap of streamed lists costs the store nothing.
  reply.raw.once('close', options.slots.take(request, reply));
  // The first batch is read before the status goes out, so a store that is
  // down gets a proper 503; a failure after that aborts the connection.
  const first = await list.read(list.after, OBJECT_STREAM_BATCH);
  reply.header('event-seq', String(first.latestSeq));
  const body = listStream(asJson(first), jsonBatches(first, list), {
    res: reply.raw,
    stallTimeoutMs: options.stallTimeoutMs,
    onCut: () => request.log.info('list cut: the client stopped reading'),
  });
  // A stream bypasses the response schema (the type provider cannot know that).
  return reply.type(JSON_TYPE).send(body);
}

/** The batches after `first`, each read only when the client took the one before. */
async function* jsonBatches<T>(
  first: ObjectPage<T>,
  list: ObjectListRequest<T>,
): AsyncGenerator<{ json: string; count: number }> {
  let page = first;
  for (;;) {
    const last = page.items.at(-1);
    if (!page.more || last === undefined) return;
    page = await list.read(list.keyOf(last), OBJECT_STREAM_BATCH);
    yield asJson(page);
  }
}

function asJson<T>(page: ObjectPage<T>): { json: string; count: number } {
  return {
    json: page.items.map((item) => JSON.stringify(item)).join(','),
    count: page.items.length,
  };
}
