/** The SQL of a message list on PostgreSQL: the domain's list filter (list-filter.ts) in PostgreSQL's words. */
import pg from 'pg';
import { aroundHalves, type AroundFilter, type AroundHalves } from '../../domain/around-page.ts';
import {
  listFilter,
  listValues,
  type ListCondition,
  type ListFilter,
} from '../../domain/list-filter.ts';
import type { ListQuery } from '../../domain/message.ts';
import { iso, MIN_ID } from './room-sql.ts';

/** The message row as the domain type (also used by the benchmark's in-process floor). */
export const MESSAGE_COLUMNS = `id::text AS id, room, author, content,
  ${iso('created_at')} AS "createdAt", ${iso('updated_at')} AS "updatedAt",
  version, reply_to::text AS "replyTo"`;

export const MAX_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** The change log's latest sequence number, read in the list's own statement (one snapshot). */
export const LATEST_SEQ = `(SELECT COALESCE((SELECT max(seq) FROM changes), m.purged_through)
  FROM change_log_meta m WHERE m.id = 1)`;

/**
 * One round trip per page. `aggregated`: one row `{latest, count, json}`,
 * the page's stored JSON texts joined in the database (`count` is at most
 * `limit + 1`: one more says more lie beyond, and the caller cuts it off). `rows`: a list by ids (at most
 * 100) as rows `{latest, id, body}` (one row with null id when none match),
 * sorted and cut by the caller, since PostgreSQL 15 could only order the
 * primary-key lookups with a Sort node.
 */
export interface ListSql {
  /** The prepared statement's name: the same for every query of this shape. */
  readonly name: string;
  readonly text: string;
  readonly kind: 'aggregated' | 'rows';
}

export interface ListStatement extends ListSql {
  readonly values: unknown[];
}

/**
 * Every column is qualified: an unqualified ORDER BY id once bound to a text output column
 * `id` (id::text) and sorted every row instead of walking the index.
 */
type ParamType = 'text' | 'uuid' | 'integer' | 'term';

function condition(c: ListCondition, param: (type: ParamType) => string): string {
  switch (c.kind) {
    case 'room-range': {
      // A room's range of the (room, id) index, as row comparisons: with `room = $1` the planner
      // may walk the primary key instead and filter by room, which reads every other room's
      // messages in between (all of history for a room that has been quiet for long). Row
      // comparisons only that index can serve, and ORDER BY (room, id) is exactly its order.
      const room = param('text');
      const lower = c.after
        ? `(messages.room, messages.id) > (${room}, ${param('uuid')}::uuid)`
        : `(messages.room, messages.id) >= (${room}, '${MIN_ID}'::uuid)`;
      const upper = c.before
        ? `(messages.room, messages.id) < (${room}, ${param('uuid')}::uuid)`
        : `(messages.room, messages.id) <= (${room}, '${MAX_ID}'::uuid)`;
      return `${lower} AND ${upper}`;
    }
    case 'reply-range': {
      // Equality on the thread's key: it implies the partial index's reply_to IS NOT NULL.
      const thread = `messages.reply_to = ${param('uuid')}::uuid`;
      const lower = c.after ? ` AND messages.id > ${param('uuid')}::uuid` : '';
      const upper = c.before ? ` AND messages.id < ${param('uuid')}::uuid` : '';
      return `${thread}${lower}${upper}`;
    }
    case 'reply-to':
      return `messages.reply_to = ${param('uuid')}::uuid`;
    case 'room':
      return `messages.room = ${param('text')}`;
    case 'room-filter':
      // Not a comparison an index can serve: the planner would otherwise intersect the room's
      // key with the thread's and sort the result (seen in the plan test).
      return `(messages.room = ${param('text')}) IS TRUE`;
    case 'after':
      return `messages.id > ${param('uuid')}::uuid`;
    case 'before':
      return `messages.id < ${param('uuid')}::uuid`;
    case 'ids':
      return `messages.id = ANY(${param('uuid')}::uuid[])`;
    case 'search':
      // One LIKE per term: the trigram index serves it (3 code points or more), and it is exact
      // whatever the index found (the term's %, _ and \ escaped: searchPattern).
      return Array.from(
        { length: c.terms },
        () => `messages.search_text LIKE ${param('term')}`,
      ).join(' AND ');
    case 'readable':
      // A filter beside the walk, which an OR keeps from becoming a join: the walk stays the
      // index's, in order, up to the limit. The planner hashes the private rooms (rooms_private)
      // and the subject's rooms (memberships_subject_room) once per statement, or looks each
      // row's room up by key; test/store/list-plans.test.ts checks both stay index walks.
      return readableSql('messages.room', param('text'));
  }
}

/** The room in `roomColumn` is one the subject in `subject` may read (room-access.ts mayRead). */
export function readableSql(roomColumn: string, subject: string): string {
  return `(NOT EXISTS (SELECT 1 FROM rooms WHERE rooms.name = ${roomColumn}
      AND rooms.visibility = 'private')
    OR EXISTS (SELECT 1 FROM memberships WHERE memberships.room = ${roomColumn}
      AND memberships.subject = ${subject}))`;
}

/** The ordered walk of one query: its rows' `columns`, at most limit + 1. */
function walkSql(
  filter: ListFilter,
  param: (type: ParamType) => string,
  columns = 'messages.body',
): string {
  const where = filter.conditions.map((c) => condition(c, param));
  const filterSql = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  const limit = param('integer');
  return `SELECT ${columns} FROM messages${filterSql}
      ORDER BY ${orderSql(filter)} LIMIT ${limit}::integer + 1`;
}

/** The ORDER BY of a filter's walk: its index's key, in the filter's order. */
function orderSql(filter: ListFilter): string {
  const direction = filter.order === 'desc' ? 'DESC' : 'ASC';
  return filter.walk === 'room-id'
    ? `messages.room ${direction}, messages.id ${direction}`
    : filter.walk === 'reply-id'
      ? `messages.reply_to ${direction}, messages.id ${direction}`
      : `messages.id ${direction}`;
}

/** The page of one query: `count` (at most limit + 1) and the joined `json`, one row. */
function pageSql(filter: ListFilter, param: (type: ParamType) => string): string {
  // The aggregate takes the rows in the order the ordered subquery yields them (a plain
  // Aggregate over a Limit over an index scan: nothing reorders them; the contract suite checks
  // the order of every shape). An ORDER BY inside string_agg, or numbering the rows to leave
  // the extra one out here, cost the database about as much again as the whole page
  // (measured): the caller leaves the extra one out instead.
  return `SELECT count(*)::integer AS count, string_agg(s.body, ',') AS json
    FROM (${walkSql(filter, param)}) s`;
}

function render(filter: ListFilter): ListSql {
  let count = 0;
  const param = () => `$${++count}`;
  if (filter.walk !== 'ids') {
    const page = pageSql(filter, param);
    const text = `SELECT ${LATEST_SEQ} AS latest, p.count, p.json FROM (${page}) p`;
    return { name: filter.name, text, kind: 'aggregated' };
  }
  const where = filter.conditions.map((c) => condition(c, param));
  const filterSql = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  const text = `SELECT l.latest, t.id, t.body FROM (SELECT ${LATEST_SEQ} AS latest) l
    LEFT JOIN (SELECT messages.id::text AS id, messages.body FROM messages${filterSql}) t ON true`;
  return { name: filter.name, text, kind: 'rows' };
}

/**
 * Several pages of one shape in one statement (see page-batcher.ts): each
 * query's values as one array per parameter, unnested into rows `q`, each
 * row's page read by the same ordered index walk as alone. Rows come back
 * with `n`, the query's place in the arrays.
 */
export function listBatchSql(filter: ListFilter): { name: string; text: string } {
  return batchSql(`${filter.name}-batch`, 'p.count, p.json', (param) => pageSql(filter, param));
}

/** Several pages of one statement's shape (`page`, one row each), as listBatchSql says. */
function batchSql(
  name: string,
  columns: string,
  page: (param: (type: ParamType) => string) => string,
): { name: string; text: string } {
  const types: ParamType[] = [];
  const param = (type: ParamType) => {
    types.push(type);
    return `q.p${types.length}`;
  };
  const pageText = page(param);
  const arrays = types
    .map((type, i) => `$${i + 1}::${type === 'term' ? 'text' : type}[]`)
    .join(', ');
  const names = types.map((_, i) => `p${i + 1}`).join(', ');
  const text = `SELECT q.n, ${LATEST_SEQ} AS latest, ${columns}
    FROM unnest(${arrays}) WITH ORDINALITY AS q(${names}, n)
    CROSS JOIN LATERAL (${pageText}) p`;
  return { name, text };
}

const rendered = new Map<ListFilter, ListSql>();

/** A filter's statement, rendered once per shape. */
export function listSql(filter: ListFilter): ListSql {
  let sql = rendered.get(filter);
  if (sql === undefined) {
    sql = render(filter);
    rendered.set(filter, sql);
  }
  return sql;
}

/** A term as a LIKE pattern that finds it anywhere, as it is: the default escape is a backslash. */
export function searchPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`;
}

/** The values of the filter's statement: the limit too, unless the rows are cut here. */
export function listParameters(
  filter: ListFilter,
  query: ListQuery & { readonly limit: number },
): unknown[] {
  const values = listValues(filter, query, { term: searchPattern });
  if (filter.walk !== 'ids') values.push(query.limit);
  return values;
}

/**
 * A search's page statement, planned for its values: they are written into
 * the text as literals, since the service's connections force generic plans
 * (see postgres-store.ts) and a generic plan can tell neither a term in a
 * hundred messages (the trigram index, then sort a few rows) from one in
 * every tenth (the ordered walk, checking rows until the page is full), nor
 * a page of 50 from a page of 1000. Not for an id list, whose at most 100
 * lookups need no such choice.
 */
export function searchStatement(query: ListQuery & { readonly limit: number }): string {
  const filter = listFilter(query);
  if (!filter.search || filter.walk === 'ids') throw new Error('not a search page');
  const values = listValues(filter, query, { term: searchPattern });
  values.push(query.limit);
  let next = 0;
  const param = (type: ParamType) => {
    const value = values[next++];
    return type === 'integer' ? String(Number(value)) : pg.escapeLiteral(String(value));
  };
  return `SELECT ${LATEST_SEQ} AS latest, p.count, p.json FROM (${pageSql(filter, param)}) p`;
}

/** A query's statement and values together (EXPLAIN in the plan tests). */
export function listStatement(query: ListQuery & { readonly limit: number }): ListStatement {
  const filter = listFilter(query);
  return { ...listSql(filter), values: listParameters(filter, query) };
}

/**
 * An around page's rows (around-page.ts) as one walk of the list's own index
 * in the requested order, from the behind half's farthest row to as far
 * ahead as both halves can reach: the same walk as a history page's, and
 * one probe before it. The probe walks from around outwards, against the
 * requested order, to the behind half's farthest row (OFFSET its size: the
 * extra one, which says more lie beyond); without one (fewer lie there) the
 * walk starts from the end of the key. It reads at most both halves' sizes
 * plus their extra rows, and counts those on the behind side of around:
 * when that side holds fewer than its share, the walk may read more than
 * the ahead half's, and the caller cuts them off the end. (Three scans, the
 * ahead half's walk and the behind half read back from its farthest row,
 * cost the database 55 µs a page against this walk's 48.5 and a history
 * page's 40, in the bench at 1M messages; turning the behind half round by
 * the aggregate's ORDER BY, a sort, measured slower than either, by hand.)
 * In a room the farthest row takes the place of the room range's open end
 * (two upper or two lower bounds of one row comparison, the index scan
 * would start from the wrong one: it walked the room's whole history).
 * Values: the behind half's conditions' values and its size, the whole
 * shape's conditions' values, around, and the rows to read.
 */
function aroundWalkSql(filter: AroundFilter, param: (type: ParamType) => string): string {
  // A desc page's behind half lies above around, an asc page's below.
  const behindAbove = filter.behind.order === 'asc';
  const far = `(SELECT messages.id FROM messages${whereSql(filter.behind.conditions.map((c) => condition(c, param)))}
      ORDER BY ${orderSql(filter.behind)} OFFSET ${param('integer')}::integer LIMIT 1)`;
  const farEnd = `COALESCE(${far}, '${behindAbove ? MAX_ID : MIN_ID}'::uuid)`;
  let inRoom = false;
  const where = filter.whole.conditions.map((c) => {
    if (c.kind !== 'room-range') return condition(c, param);
    inRoom = true;
    const room = param('text');
    const key = '(messages.room, messages.id)';
    return behindAbove
      ? `${key} >= (${room}, '${MIN_ID}'::uuid) AND ${key} <= (${room}, ${farEnd})`
      : `${key} >= (${room}, ${farEnd}) AND ${key} <= (${room}, '${MAX_ID}'::uuid)`;
  });
  if (!inRoom) where.push(`messages.id ${behindAbove ? '<=' : '>='} ${farEnd}`);
  const behindSide = `s.id ${behindAbove ? '>' : '<='} ${param('uuid')}::uuid`;
  return `SELECT count(*) FILTER (WHERE ${behindSide})::integer AS behind, count(*)::integer AS total,
      string_agg(s.body, ',') AS json
    FROM (SELECT messages.id, messages.body FROM messages${whereSql(where)}
      ORDER BY ${orderSql(filter.whole)} LIMIT ${param('integer')}::integer) s`;
}

function whereSql(conditions: readonly string[]): string {
  return conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
}

/**
 * An around page (around-page.ts) in one row: `behind`, the rows read on the
 * behind side of around (at most its size + 1), `total` all rows read, and
 * `json` their texts joined in the requested order. An extra row stays in:
 * the behind half's is the first text, and after the ahead half's size + 1
 * rows the caller cuts the rest off, as a list page's extra row.
 */
function aroundPageSql(filter: AroundFilter, param: (type: ParamType) => string): string {
  if (!filter.search) return aroundWalkSql(filter, param);
  // A search reads each half once and turns the behind half round by its aggregate: a walk
  // from the farthest row would cost a second search (a trigram index scan, for a rare term).
  const direction = filter.ahead.order === 'desc' ? 'DESC' : 'ASC';
  const behind = walkSql(filter.behind, param, 'messages.id, messages.body');
  const ahead = walkSql(filter.ahead, param);
  return `SELECT b.count AS behind, b.count + a.count AS total, concat_ws(',', b.json, a.json) AS json
    FROM (SELECT count(*)::integer AS count, string_agg(s.body, ',' ORDER BY s.id ${direction}) AS json
        FROM (${behind}) s) b,
      (SELECT count(*)::integer AS count, string_agg(s.body, ',') AS json FROM (${ahead}) s) a`;
}

const AROUND_COLUMNS = 'p.behind, p.total, p.json';

const renderedArounds = new Map<AroundFilter, { name: string; text: string }>();

/** An around page's statement, rendered once per pair of shapes: one row `{latest, behind, total, json}`. */
export function aroundSql(filter: AroundFilter): { name: string; text: string } {
  let sql = renderedArounds.get(filter);
  if (sql === undefined) {
    let count = 0;
    const page = aroundPageSql(filter, () => `$${++count}`);
    sql = {
      name: filter.name,
      text: `SELECT ${LATEST_SEQ} AS latest, ${AROUND_COLUMNS} FROM (${page}) p`,
    };
    renderedArounds.set(filter, sql);
  }
  return sql;
}

/** Several around pages of one pair of shapes in one statement (see listBatchSql). */
export function aroundBatchSql(filter: AroundFilter): { name: string; text: string } {
  return batchSql(`${filter.name}-batch`, AROUND_COLUMNS, (param) => aroundPageSql(filter, param));
}

/** The values of an around statement, as aroundPageSql takes them. */
export function aroundParameters(halves: AroundHalves, around: string): unknown[] {
  const { filter, behind, ahead } = halves;
  const values = listValues(filter.behind, behind, { term: searchPattern });
  values.push(behind.limit);
  if (filter.search) {
    values.push(...listValues(filter.ahead, ahead, { term: searchPattern }));
    values.push(ahead.limit);
  } else {
    // The whole shape's values are the halves' but for their bounds: behind has them all.
    values.push(...listValues(filter.whole, behind), around, behind.limit + ahead.limit + 2);
  }
  return values;
}

/** An around page that searches, planned for its values as searchStatement says. */
export function aroundSearchStatement(halves: AroundHalves, around: string): string {
  const values = aroundParameters(halves, around);
  let next = 0;
  const param = (type: ParamType) => {
    const value = values[next++];
    if (type === 'integer') return String(Number(value));
    // An id list (well-formed ids only) as an array literal.
    return pg.escapeLiteral(Array.isArray(value) ? `{${value.join(',')}}` : String(value));
  };
  const page = aroundPageSql(halves.filter, param);
  return `SELECT ${LATEST_SEQ} AS latest, ${AROUND_COLUMNS} FROM (${page}) p`;
}

/** An around page's statement and values together (EXPLAIN in the plan tests). */
export function aroundStatement(
  query: ListQuery & { readonly limit: number },
  around: string,
): { readonly text: string; readonly values: unknown[] } {
  const halves = aroundHalves(query, around);
  return { text: aroundSql(halves.filter).text, values: aroundParameters(halves, around) };
}
