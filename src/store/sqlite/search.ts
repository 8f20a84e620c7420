/**
 * Search lists on SQLite (the `search` condition of list-filter.ts). Two ways
 * to a page, both exact, since every term is checked by instr() on the stored
 * normalized text whatever found the row:
 *
 * - the walk: the list's own ordered walk (id, or a room's (room, id) range),
 *   checking each row, up to a budget of rows. A common term fills a page
 *   within a few hundred rows; ordering by id costs nothing.
 * - the index: the rows that hold the trigrams of every term of 3 or more
 *   code points (FTS5 MATCH), each found by its key, then checked, ordered
 *   and cut. Its cost follows the number of matches, so it serves the terms
 *   the walk found too rarely.
 *
 * SQLite's planner cannot tell a rare term from a common one, so the walk
 * goes first: when its budget fills the page, the index is never asked. Terms
 * under 3 code points alone (allowed only within a room) walk the room's
 * range without a budget, as the contract allows.
 */
import type { Database, Statement } from 'better-sqlite3';
import { listValues, type ListFilter } from '../../domain/list-filter.ts';
import type { ListQuery } from '../../domain/message.ts';
import { listSql, whereSql } from './list-sql.ts';

/** Rows the walk may check per row asked for, and at least: about a millisecond or two. */
const WALK_ROWS_PER_ROW = 40;
const MIN_WALK_ROWS = 2000;

/** Trigrams of one term asked of the index at most: each one more is one more doclist to merge. */
const MAX_TRIGRAMS_PER_TERM = 4;

/** A trigram as an FTS5 string: double quotes doubled, so any text is one token. */
function ftsString(trigram: string): string {
  return `"${trigram.replaceAll('"', '""')}"`;
}

/** At most `count` of `items`, evenly spread, the first and the last among them. */
function spread<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  const step = (items.length - 1) / (count - 1);
  return Array.from({ length: count }, (_, i) => items[Math.round(i * step)]!);
}

/**
 * What the index is asked: trigrams of each term of 3 or more code points,
 * all required. The index keeps no positions (detail=none), so this is a
 * superset of the messages holding the terms, which instr() then narrows;
 * of a long term's trigrams, a few evenly spread ones are enough for that,
 * and each fewer is a doclist less to merge.
 */
export function matchExpression(terms: readonly string[]): string {
  const asked = new Set<string>();
  for (const term of terms) {
    const points = Array.from(term);
    const trigrams: string[] = [];
    for (let i = 0; i + 3 <= points.length; i++) trigrams.push(points.slice(i, i + 3).join(''));
    for (const trigram of spread(trigrams, MAX_TRIGRAMS_PER_TERM)) asked.add(trigram);
  }
  return [...asked].map(ftsString).join(' AND ');
}

export interface SearchStatements {
  /** Ordered walk of at most a budget of rows, checked; undefined when the plain list is used. */
  readonly walk: string | undefined;
  /** Index lookup, checked, ordered, cut; undefined when the plain list is used. */
  readonly index: string | undefined;
  /** How many rows the walk's range holds, counted up to a budget; undefined as the walk. */
  readonly range: string | undefined;
  /** The list's own statement with the terms checked per row (an id list, or short terms only). */
  readonly plain: string;
}

export function searchStatements(filter: ListFilter): SearchStatements {
  const plain = listSql(filter);
  const search = filter.conditions.find((c) => c.kind === 'search');
  if (search === undefined || search.indexed === 0 || filter.walk === 'ids') {
    return { walk: undefined, index: undefined, range: undefined, plain };
  }
  const direction = filter.order === 'desc' ? 'DESC' : 'ASC';
  const others = filter.conditions.filter((c) => c.kind !== 'search');
  const walk = `SELECT body FROM (SELECT body, id, search_text FROM messages${whereSql(others)}
      ORDER BY id ${direction} LIMIT ?)${whereSql([search])} ORDER BY id ${direction} LIMIT ?`;
  // CROSS JOIN: the matches lead; INDEXED BY: each message found by its search_rowid, whatever
  // the statistics say (with a room or bounds, the planner would rather walk those per match).
  const index = `SELECT messages.body FROM message_search
      CROSS JOIN messages INDEXED BY messages_search_rowid
        ON messages.search_rowid = message_search.rowid
      WHERE message_search MATCH ? AND ${whereSql(filter.conditions).slice(' WHERE '.length)}
      ORDER BY messages.id ${direction} LIMIT ?`;
  const range = `SELECT count(*) FROM (SELECT 1 FROM messages${whereSql(others)} LIMIT ?)`;
  return { walk, index, range, plain };
}

interface Prepared {
  readonly walk: Statement | undefined;
  readonly index: Statement | undefined;
  readonly range: Statement | undefined;
  readonly plain: Statement;
}

export class SqliteSearch {
  readonly #db: Database;
  /** Prepared once per shape. */
  readonly #statements = new Map<ListFilter, Prepared>();

  constructor(db: Database) {
    this.#db = db;
  }

  /** The stored JSON of at most `count` matching messages, in the query's order. */
  rows(filter: ListFilter, query: ListQuery, count: number): string[] {
    const statements = this.#prepared(filter);
    const values = listValues(filter, query, { ids: JSON.stringify });
    if (
      statements.walk === undefined ||
      statements.index === undefined ||
      statements.range === undefined
    ) {
      return statements.plain.all(...values, count) as string[];
    }
    const search = filter.conditions.find((c) => c.kind === 'search')!;
    // The search condition is the filter's last: its values, the terms, are the last ones.
    const terms = values.slice(values.length - search.terms);
    const others = values.slice(0, values.length - search.terms);
    const budget = Math.max(MIN_WALK_ROWS, count * WALK_ROWS_PER_ROW);
    const walked = statements.walk.all(...others, budget, ...terms, count) as string[];
    if (walked.length >= count) return walked;
    // A range the walk read whole (a small room, narrow bounds) holds no other match: the
    // index, which finds every match in the store before the range narrows them, is not asked.
    if ((statements.range.get(...others, budget) as number) < budget) return walked;
    const match = matchExpression(terms.slice(0, search.indexed) as string[]);
    return statements.index.all(match, ...values, count) as string[];
  }

  #prepared(filter: ListFilter): Prepared {
    let prepared = this.#statements.get(filter);
    if (prepared === undefined) {
      const sql = searchStatements(filter);
      prepared = {
        walk: sql.walk === undefined ? undefined : this.#db.prepare(sql.walk).pluck(),
        index: sql.index === undefined ? undefined : this.#db.prepare(sql.index).pluck(),
        range: sql.range === undefined ? undefined : this.#db.prepare(sql.range).pluck(),
        plain: this.#db.prepare(sql.plain).pluck(),
      };
      this.#statements.set(filter, prepared);
    }
    return prepared;
  }
}
