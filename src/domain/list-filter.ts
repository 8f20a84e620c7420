/**
 * A list's filter, engine-neutral: the conditions every listed message meets
 * and the key the list walks, described once per query shape (which of room,
 * after, before, ids and replyTo it has, and its order). Each engine renders a shape
 * into its own SQL once, and takes a query's values from listValues.
 */
import type { ListOrder, ListQuery } from './message.ts';
import { indexedTerms } from './search-text.ts';

/** One condition every listed message meets; its values are the query's fields of the same names. */
export type ListCondition =
  /** room = room, and after < id < before for the bounds the shape has: one range of the (room, id) key. */
  | { readonly kind: 'room-range'; readonly after: boolean; readonly before: boolean }
  /** replyTo = replyTo, and after < id < before for the bounds the shape has: one range of the (replyTo, id) key. */
  | { readonly kind: 'reply-range'; readonly after: boolean; readonly before: boolean }
  /** replyTo = replyTo (beside an id list, which decides the rows). */
  | { readonly kind: 'reply-to' }
  /** room = room (beside an id list, which decides the rows). */
  | { readonly kind: 'room' }
  /**
   * room = room, beside a thread's walk: never a key of its own (a thread lies
   * in one room, so the room's key would only add rows to intersect and sort).
   */
  | { readonly kind: 'room-filter' }
  /** id > after */
  | { readonly kind: 'after' }
  /** id < before */
  | { readonly kind: 'before' }
  /** id is one of ids (at most MAX_LIST_IDS). */
  | { readonly kind: 'ids' }
  /**
   * The message's room is one `readableBy` may read (room-access.ts mayRead):
   * not a private room, or a private room it is a member of.
   */
  | { readonly kind: 'readable' }
  /**
   * The message's normalized content (search-text.ts) contains each of the
   * query's `terms` search terms; `indexed` of them (the first ones) are long
   * enough for a trigram index. Its values: the terms, longest first.
   */
  | { readonly kind: 'search'; readonly terms: number; readonly indexed: number };

export type ListWalk =
  /** Every room's messages: the id key, in order, up to the limit. */
  | 'id'
  /** One room's messages: its range of the (room, id) key, in order, up to the limit. */
  | 'room-id'
  /** One message's direct replies: its range of the (replyTo, id) key, in order, up to the limit. */
  | 'reply-id'
  /** The messages of an id list, each found by its key: at most MAX_LIST_IDS rows to order and cut. */
  | 'ids';

export interface ListFilter {
  /** The same for every query of this shape, and only for those: a name for its statement. */
  readonly name: string;
  /** Every listed message meets all of them. */
  readonly conditions: readonly ListCondition[];
  readonly walk: ListWalk;
  readonly order: ListOrder;
  /** Whether one of the conditions is a search (then engines may take another way to the rows). */
  readonly search: boolean;
}

/** One filter per shape, made on first use: a list costs no description of its own. */
const shapes: ListFilter[] = [];

/** The filter of this query's shape: the same object for every query of that shape. */
export function listFilter(query: ListQuery): ListFilter {
  const shape =
    (query.room !== undefined ? 1 : 0) |
    (query.after !== undefined ? 2 : 0) |
    (query.before !== undefined ? 4 : 0) |
    (query.ids !== undefined ? 8 : 0) |
    (query.order === 'desc' ? 16 : 0) |
    (query.readableBy !== undefined ? 32 : 0) |
    (query.replyTo !== undefined ? 1 << 15 : 0) |
    // A search's shape also says how many terms it has, and how many an index can serve.
    (query.q !== undefined ? 64 | (query.q.terms.length << 7) | (indexedCount(query) << 11) : 0);
  return (shapes[shape] ??= describe(query));
}

function describe(query: ListQuery): ListFilter {
  const room = query.room !== undefined;
  const after = query.after !== undefined;
  const before = query.before !== undefined;
  const ids = query.ids !== undefined;
  const reply = query.replyTo !== undefined;
  const conditions: ListCondition[] = [];
  // The walk's own key range first: an id list's keys, a thread's range, a room's range.
  if (!ids && reply) {
    conditions.push({ kind: 'reply-range', after, before });
    if (room) conditions.push({ kind: 'room-filter' });
  } else if (!ids && room) conditions.push({ kind: 'room-range', after, before });
  else {
    if (room) conditions.push({ kind: 'room' });
    if (after) conditions.push({ kind: 'after' });
    if (before) conditions.push({ kind: 'before' });
  }
  if (ids) conditions.push({ kind: 'ids' });
  if (ids && reply) conditions.push({ kind: 'reply-to' });
  const readable = query.readableBy !== undefined;
  if (readable) conditions.push({ kind: 'readable' });
  const terms = query.q?.terms.length ?? 0;
  const indexed = indexedCount(query);
  if (query.q !== undefined) conditions.push({ kind: 'search', terms, indexed });
  const search = query.q !== undefined ? `q${terms}.${indexed}` : '';
  const letters = `${room ? 'r' : ''}${after ? 'a' : ''}${before ? 'b' : ''}${ids ? 'i' : ''}${reply ? 't' : ''}${readable ? 'p' : ''}${search}`;
  return {
    name: `list-${letters}-${query.order}`,
    conditions,
    walk: ids ? 'ids' : reply ? 'reply-id' : room ? 'room-id' : 'id',
    order: query.order,
    search: query.q !== undefined,
  };
}

function indexedCount(query: ListQuery): number {
  return query.q === undefined ? 0 : indexedTerms(query.q.terms).length;
}

/** The terms, those an index can serve first (each group in the query's order). */
function searchTerms(query: ListQuery): string[] {
  const terms = query.q?.terms ?? [];
  const indexed = indexedTerms(terms);
  return [...indexed, ...terms.filter((t) => !indexed.includes(t))];
}

const asIs = (ids: readonly string[]): unknown => ids;
const asTerm = (term: string): unknown => term;

/** How an engine wants some values: an id list as one value, a search term as a pattern. */
export interface ValueEncoding {
  readonly ids?: (ids: readonly string[]) => unknown;
  readonly term?: (term: string) => unknown;
}

/**
 * The query's values for its filter's conditions, in their order (a room
 * range: the room, then its bounds); an id list and search terms as `encoding` makes them.
 */
export function listValues(
  filter: ListFilter,
  query: ListQuery,
  encoding: ValueEncoding = {},
): unknown[] {
  const encodeIds = encoding.ids ?? asIs;
  const encodeTerm = encoding.term ?? asTerm;
  const values: unknown[] = [];
  for (const condition of filter.conditions) {
    switch (condition.kind) {
      case 'room-range':
        values.push(query.room);
        if (condition.after) values.push(query.after);
        if (condition.before) values.push(query.before);
        break;
      case 'reply-range':
        values.push(query.replyTo);
        if (condition.after) values.push(query.after);
        if (condition.before) values.push(query.before);
        break;
      case 'reply-to':
        values.push(query.replyTo);
        break;
      case 'room':
      case 'room-filter':
        values.push(query.room);
        break;
      case 'after':
        values.push(query.after);
        break;
      case 'before':
        values.push(query.before);
        break;
      case 'ids':
        values.push(encodeIds(query.ids ?? []));
        break;
      case 'readable':
        values.push(query.readableBy);
        break;
      case 'search':
        for (const term of searchTerms(query)) values.push(encodeTerm(term));
        break;
    }
  }
  return values;
}
