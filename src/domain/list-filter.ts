/**
 * A list's filter, engine-neutral: the conditions every listed message meets
 * and the key the list walks, described once per query shape (which of room,
 * after, before and ids it has, and its order). Each engine renders a shape
 * into its own SQL once, and takes a query's values from listValues.
 */
import type { ListOrder, ListQuery } from './message.ts';

/** One condition every listed message meets; its values are the query's fields of the same names. */
export type ListCondition =
  /** room = room, and after < id < before for the bounds the shape has: one range of the (room, id) key. */
  | { readonly kind: 'room-range'; readonly after: boolean; readonly before: boolean }
  /** room = room (beside an id list, which decides the rows). */
  | { readonly kind: 'room' }
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
  | { readonly kind: 'readable' };

export type ListWalk =
  /** Every room's messages: the id key, in order, up to the limit. */
  | 'id'
  /** One room's messages: its range of the (room, id) key, in order, up to the limit. */
  | 'room-id'
  /** The messages of an id list, each found by its key: at most MAX_LIST_IDS rows to order and cut. */
  | 'ids';

export interface ListFilter {
  /** The same for every query of this shape, and only for those: a name for its statement. */
  readonly name: string;
  /** Every listed message meets all of them. */
  readonly conditions: readonly ListCondition[];
  readonly walk: ListWalk;
  readonly order: ListOrder;
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
    (query.readableBy !== undefined ? 32 : 0);
  return (shapes[shape] ??= describe(query));
}

function describe(query: ListQuery): ListFilter {
  const room = query.room !== undefined;
  const after = query.after !== undefined;
  const before = query.before !== undefined;
  const ids = query.ids !== undefined;
  const conditions: ListCondition[] = [];
  if (room && !ids) conditions.push({ kind: 'room-range', after, before });
  else {
    if (room) conditions.push({ kind: 'room' });
    if (after) conditions.push({ kind: 'after' });
    if (before) conditions.push({ kind: 'before' });
  }
  if (ids) conditions.push({ kind: 'ids' });
  const readable = query.readableBy !== undefined;
  if (readable) conditions.push({ kind: 'readable' });
  const letters = `${room ? 'r' : ''}${after ? 'a' : ''}${before ? 'b' : ''}${ids ? 'i' : ''}${readable ? 'p' : ''}`;
  return {
    name: `list-${letters}-${query.order}`,
    conditions,
    walk: ids ? 'ids' : room ? 'room-id' : 'id',
    order: query.order,
  };
}

const asIs = (ids: readonly string[]): unknown => ids;

/**
 * The query's values for its filter's conditions, in their order (a room
 * range: the room, then its bounds); an id list as `encodeIds` makes it.
 */
export function listValues(
  filter: ListFilter,
  query: ListQuery,
  encodeIds: (ids: readonly string[]) => unknown = asIs,
): unknown[] {
  const values: unknown[] = [];
  for (const condition of filter.conditions) {
    switch (condition.kind) {
      case 'room-range':
        values.push(query.room);
        if (condition.after) values.push(query.after);
        if (condition.before) values.push(query.before);
        break;
      case 'room':
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
    }
  }
  return values;
}
