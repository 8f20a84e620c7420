/** The SQL of a message list on PostgreSQL: one prepared statement per query shape. */
import type { ListQuery } from '../../messages/message.ts';

/** The message row as the domain type (also used by the benchmark's in-process floor). */
export const MESSAGE_COLUMNS = `id::text AS id, room, author, content,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt",
  version`;

const MIN_ID = '00000000-0000-0000-0000-000000000000';
const MAX_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** The change log's latest sequence number, read in the list's own statement (one snapshot). */
const LATEST_SEQ = `(SELECT COALESCE((SELECT max(seq) FROM changes), m.purged_through)
  FROM change_log_meta m WHERE m.id = 1)`;

/**
 * One round trip per page. `aggregated`: one row `{latest, count, json}`,
 * the page's stored JSON texts joined in the database (`count` is at most
 * `limit + 1`: one more says more lie beyond). `rows`: a list by ids (at most
 * 100) as rows `{latest, id, body}` (one row with null id when none match),
 * sorted and cut by the caller, since PostgreSQL 15 could only order the
 * primary-key lookups with a Sort node.
 */
export interface ListStatement {
  /** The prepared statement's name: the same for every query of this shape. */
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
  readonly kind: 'aggregated' | 'rows';
}

export function listStatement(query: ListQuery & { readonly limit: number }): ListStatement {
  const values: unknown[] = [];
  const where: string[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  // Every column is qualified: an unqualified ORDER BY id once bound to a text output column
  // `id` (id::text) and sorted every row instead of walking the index.
  if (query.room !== undefined && query.ids === undefined) {
    // A room's range of the (room, id) index, as row comparisons: with `room = $1` the planner may
    // walk the primary key instead and filter by room, which reads every other room's messages
    // in between (all of history for a room that has been quiet for long). Row comparisons only
    // that index can serve, and the order below is exactly its order.
    const room = param(query.room);
    where.push(
      query.after === undefined
        ? `(messages.room, messages.id) >= (${room}, '${MIN_ID}'::uuid)`
        : `(messages.room, messages.id) > (${room}, ${param(query.after)}::uuid)`,
      query.before === undefined
        ? `(messages.room, messages.id) <= (${room}, '${MAX_ID}'::uuid)`
        : `(messages.room, messages.id) < (${room}, ${param(query.before)}::uuid)`,
    );
  } else {
    if (query.room !== undefined) where.push(`messages.room = ${param(query.room)}`);
    if (query.after !== undefined) where.push(`messages.id > ${param(query.after)}::uuid`);
    if (query.before !== undefined) where.push(`messages.id < ${param(query.before)}::uuid`);
  }
  if (query.ids !== undefined) where.push(`messages.id = ANY(${param(query.ids)}::uuid[])`);
  const filter = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  const name = `list-${query.room !== undefined ? 'r' : ''}${query.after !== undefined ? 'a' : ''}${
    query.before !== undefined ? 'b' : ''
  }${query.ids !== undefined ? 'i' : ''}-${query.order}`;
  if (query.ids !== undefined) {
    const text = `SELECT l.latest, t.id, t.body FROM (SELECT ${LATEST_SEQ} AS latest) l
      LEFT JOIN (SELECT messages.id::text AS id, messages.body FROM messages${filter}) t ON true`;
    return { name, text, values, kind: 'rows' };
  }
  const direction = query.order === 'desc' ? 'DESC' : 'ASC';
  const order =
    query.room === undefined
      ? `messages.id ${direction}`
      : `messages.room ${direction}, messages.id ${direction}`;
  const limit = param(query.limit);
  // row_number() numbers the rows in the order the ordered subquery yields them; the aggregate
  // joins them in that order and leaves out the one extra row.
  const text = `SELECT ${LATEST_SEQ} AS latest, count(*)::integer AS count,
      string_agg(t.body, ',' ORDER BY t.n) FILTER (WHERE t.n <= ${limit}) AS json
    FROM (SELECT s.body, row_number() OVER () AS n
      FROM (SELECT messages.body FROM messages${filter}
        ORDER BY ${order} LIMIT ${limit}::integer + 1) s) t`;
  return { name, text, values, kind: 'aggregated' };
}
