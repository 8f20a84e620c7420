/** The SQL of a message list on SQLite: the domain's list filter (list-filter.ts) in SQLite's words. */
import { aroundHalves } from '../../domain/around-page.ts';
import {
  listFilter,
  listValues,
  type ListCondition,
  type ListFilter,
} from '../../domain/list-filter.ts';
import type { ListQuery } from '../../domain/message.ts';

export const MESSAGE_COLUMNS =
  'id, room, author, content, created_at, updated_at, version, reply_to';

function condition(c: ListCondition): string {
  switch (c.kind) {
    case 'room-range':
      return `room = ?${c.after ? ' AND id > ?' : ''}${c.before ? ' AND id < ?' : ''}`;
    case 'reply-range':
      return `reply_to = ?${c.after ? ' AND id > ?' : ''}${c.before ? ' AND id < ?' : ''}`;
    case 'reply-to':
      return 'reply_to = ?';
    case 'room':
      return 'room = ?';
    case 'room-filter':
      // Unary + keeps the column from being an index key (SQLite's documented way).
      return '+room = ?';
    case 'after':
      return 'id > ?';
    case 'before':
      return 'id < ?';
    case 'ids':
      return 'id IN (SELECT value FROM json_each(?))';
    case 'search':
      // Every term, on the stored normalized text: exact, whatever an index found first.
      return Array.from({ length: c.terms }, () => 'instr(search_text, ?) > 0').join(' AND ');
    case 'readable':
      // A private room's messages only for its members: one room lookup per row (rooms are few).
      return readableSql('messages.room', '?');
  }
}

/** The room in `roomColumn` is one the subject in `subject` may read (room-access.ts mayRead). */
export function readableSql(roomColumn: string, subject: string): string {
  return `NOT EXISTS (SELECT 1 FROM rooms r WHERE r.name = ${roomColumn} AND r.visibility = 'private'
    AND NOT EXISTS (SELECT 1 FROM memberships s WHERE s.room = r.name AND s.subject = ${subject}))`;
}

/** ` WHERE` and the conditions, or nothing when there are none. */
export function whereSql(conditions: readonly ListCondition[]): string {
  return conditions.length > 0 ? ` WHERE ${conditions.map(condition).join(' AND ')}` : '';
}

/**
 * A filter's statement: one per shape. A list reads each message's stored
 * JSON text (`body`) only; the room index gives id order within a room, and
 * an id list is ordered by the primary key it is looked up in.
 */
export function listSql(filter: ListFilter): string {
  const filterSql = whereSql(filter.conditions);
  const direction = filter.order === 'desc' ? 'DESC' : 'ASC';
  return `SELECT body FROM messages${filterSql} ORDER BY id ${direction} LIMIT ?`;
}

/**
 * The values of the filter's statement: an id list as one JSON array (for
 * json_each), then the limit, plus `extra` rows (one more tells whether more lie beyond).
 */
export function listParameters(
  filter: ListFilter,
  query: ListQuery & { readonly limit: number },
  extra = 0,
): unknown[] {
  const values = listValues(filter, query, { ids: JSON.stringify });
  values.push(query.limit + extra);
  return values;
}

/** A query's statement and values together (EXPLAIN QUERY PLAN in the plan tests). */
export function listStatement(query: ListQuery & { readonly limit: number }): {
  readonly text: string;
  readonly values: unknown[];
} {
  const filter = listFilter(query);
  return { text: listSql(filter), values: listParameters(filter, query) };
}

/**
 * An around page's statements (around-page.ts): each half's own list
 * statement, with its extra row, read one after the other in one snapshot
 * (EXPLAIN QUERY PLAN in the plan tests).
 */
export function aroundStatements(
  query: ListQuery & { readonly limit: number },
  around: string,
): { readonly text: string; readonly values: unknown[] }[] {
  const { filter, behind, ahead } = aroundHalves(query, around);
  return [
    { text: listSql(filter.behind), values: listParameters(filter.behind, behind, 1) },
    { text: listSql(filter.ahead), values: listParameters(filter.ahead, ahead, 1) },
  ];
}
