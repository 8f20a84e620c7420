/** The query string of GET /api/messages: its schema, its normalized form and the next-page link. */
import { Type, type Static } from '@sinclair/typebox';
import {
  ListOrder,
  MAX_LIST_IDS,
  MAX_PAGE_LIMIT,
  MessageId,
  Room,
  type ListQuery,
} from '../domain/message.ts';
import { MAX_Q_CODE_POINTS, searchQuery } from '../domain/search-text.ts';
import { AROUND_DEFAULT_LIMIT } from '../domain/around-page.ts';
import { AppError, ErrorKinds } from '../errors.ts';

export const ListQuerystring = Type.Object(
  {
    room: Type.Optional(Room),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_LIMIT,
        description: 'At most this many messages (1-1000).',
      }),
    ),
    order: Type.Optional({
      ...ListOrder,
      description: 'asc (default, oldest first) or desc (newest first).',
    }),
    after: Type.Optional({ ...MessageId, description: 'Only messages after this id (exclusive).' }),
    before: Type.Optional({
      ...MessageId,
      description: 'Only messages before this id (exclusive).',
    }),
    id: Type.Optional(
      Type.Array(MessageId, {
        maxItems: MAX_LIST_IDS,
        description: 'Repeatable, at most 100: only these messages (unknown ones are absent).',
      }),
    ),
    around: Type.Optional({
      ...MessageId,
      description:
        'The page around this message (a jump to a quote or a search hit): the ⌈limit/2⌉ messages with id <= around nearest to it and the ⌊limit/2⌋ with id > around nearest to it, among those the other parameters select, in the requested order; `limit` defaults to 50. A well-formed id that is not stored works too. With `after` or `before` it is a 400. `Link` may carry rel="next" (on past the last message, same order) and rel="prev" (on past the first message, the other order).',
    }),
    replyTo: Type.Optional({
      ...MessageId,
      description:
        'Only the direct replies to this message (its thread), in id order like every list; it works after that message is deleted.',
    }),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_Q_CODE_POINTS,
        description:
          'Search: only messages whose content contains every term. `q` (1-200 code points) is NFKC-normalized and lowercased (as JavaScript toLowerCase()), then split on White_Space into 1-10 terms; a message matches when each term is a substring of its content normalized the same way. A term under 3 code points needs another of 3 or more, or `room`.',
        examples: ['deploy friday'],
      }),
    ),
  },
  { description: 'Unknown parameters are ignored.' },
);
export type ListQuerystring = Static<typeof ListQuerystring>;

/** What GET /api/messages asks: the list's query, and the message the page is centred on, if any. */
export type ListRequest =
  | { readonly query: ListQuery; readonly around?: undefined }
  /** A page around a message is one page: it always has a limit. */
  | { readonly query: ListQuery & { readonly limit: number }; readonly around: string };

export function toListRequest(qs: ListQuerystring): ListRequest {
  if (qs.around === undefined) return { query: toListQuery(qs) };
  if (qs.after !== undefined || qs.before !== undefined) {
    const detail = 'around cannot be combined with after or before';
    throw new AppError(ErrorKinds.validation, detail, {
      errors: [{ parameter: 'around', detail }],
    });
  }
  // A page around a message is one page: never streamed.
  const limit = qs.limit ?? AROUND_DEFAULT_LIMIT;
  return { query: { ...toListQuery(qs), limit }, around: qs.around.toLowerCase() };
}

function toListQuery(qs: ListQuerystring): ListQuery {
  return {
    order: qs.order ?? 'asc',
    ...(qs.room === undefined ? {} : { room: qs.room }),
    ...(qs.limit === undefined ? {} : { limit: qs.limit }),
    ...(qs.after === undefined ? {} : { after: qs.after.toLowerCase() }),
    ...(qs.before === undefined ? {} : { before: qs.before.toLowerCase() }),
    ...(qs.id === undefined ? {} : { ids: [...new Set(qs.id.map((id) => id.toLowerCase()))] }),
    ...(qs.replyTo === undefined ? {} : { replyTo: qs.replyTo.toLowerCase() }),
    // A 400 naming q for terms it cannot take: before any read, as every malformed parameter.
    ...(qs.q === undefined ? {} : { q: searchQuery(qs.q, qs.room !== undefined) }),
  };
}

/**
 * The URL of the page after the one that ended at `last`, in the query's order
 * (call only when `limit` cut it short, or for an `around` page's links).
 */
export function nextPageUrl(basePath: string, query: ListQuery, last: string): string {
  // Written out rather than through URLSearchParams (an around page builds two links): every
  // value but q is made of URL-safe characters by its schema (a room name, ids, digits).
  let url = `${basePath}?`;
  if (query.room !== undefined) url += `room=${query.room}&`;
  url += `limit=${query.limit}&order=${query.order}`;
  const after = query.order === 'asc' ? last : query.after;
  const before = query.order === 'desc' ? last : query.before;
  if (after !== undefined) url += `&after=${after}`;
  if (before !== undefined) url += `&before=${before}`;
  for (const id of query.ids ?? []) url += `&id=${id}`;
  if (query.replyTo !== undefined) url += `&replyTo=${query.replyTo}`;
  if (query.q !== undefined) url += `&q=${encodeURIComponent(query.q.text)}`;
  return url;
}
