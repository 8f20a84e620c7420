/**
 * `around=<id>`: the page centred on a message (where a quote or a search hit
 * jumps to): the ⌈n/2⌉ messages with id <= around and the ⌊n/2⌋ after
 * it, nearest to it, read as keyset walks of the list's own shapes, on the
 * indexes a history page uses: one walk per half, from around outwards (for
 * `order=desc` the halves swap directions), or one walk in the requested
 * order from the behind half's farthest row (which, when fewer than its
 * share lie behind around, near an end of the history, reads up to twice
 * the rows it keeps). Here the two halves are described (aroundHalves), engine-
 * neutrally as list shapes, with the page's shape without bounds (`whole`,
 * for an engine that reads the page as one walk from the behind half's
 * farthest row); each store reads both in one operation, in one snapshot
 * (one statement where the engine can: MessageStore.around), and answers
 * them joined in the requested order; the links follow from that.
 *
 * "id <= around" is "id < the id right after around": ids are 128-bit
 * numbers written as fixed-width lowercase hex, so the next number is the
 * next possible id on every engine, and no engine needs an inclusive bound.
 */
import { listFilter, type ListFilter } from './list-filter.ts';
import type { ListQuery } from './message.ts';
import { firstIdOfMessagesJson, lastIdOfMessagesJson } from './message-json.ts';
import type { AroundMessagePage, MessagePage } from './message-store.ts';

/** The page size of `around` when no `limit` is given. */
export const AROUND_DEFAULT_LIMIT = 50;

export interface AroundPage {
  /** The messages in the requested order, and the change log's latest seq of their snapshot (Event-Seq). */
  readonly page: MessagePage;
  /** The bound for rel="next" (messages lie beyond it in the requested order), else undefined. */
  readonly next: string | undefined;
  /** The bound for rel="prev" (messages lie beyond it in the other order), else undefined. */
  readonly prev: string | undefined;
}

const HEX = '0123456789abcdef';

/** `id` (lowercase) plus `step` (1 or -1) as a 128-bit number, or undefined past either end. */
function stepId(id: string, step: 1 | -1): string | undefined {
  const lower = id.toLowerCase();
  const carryFrom = step === 1 ? 'f' : '0';
  for (let i = lower.length - 1; i >= 0; i -= 1) {
    const c = lower[i]!;
    if (c === '-' || c === carryFrom) continue;
    // Every digit after this one carried over (dashes stay): usually there is none.
    const tail =
      i === lower.length - 1 ? '' : lower.slice(i + 1).replace(/[0-9a-f]/g, step === 1 ? '0' : 'f');
    return `${lower.slice(0, i)}${HEX[HEX.indexOf(c) + step]!}${tail}`;
  }
  return undefined;
}

/** The smallest id greater than `id` (lowercase), or undefined for the largest id. */
export function idAfter(id: string): string | undefined {
  return stepId(id, 1);
}

/** The greatest id smaller than `id` (lowercase), or undefined for the smallest id. */
export function idBefore(id: string): string | undefined {
  return stepId(id, -1);
}

/** The query with these exclusive bounds (an undefined one is no bound) and this limit. */
function bounded(
  query: ListQuery,
  order: ListQuery['order'],
  after: string | undefined,
  before: string | undefined,
  limit: number,
): AroundHalf {
  // Not `{ ...query, order, ... }`: on Node 20 a spread followed by more properties cost about
  // a microsecond (measured), Object.assign a tenth of that.
  return Object.assign({}, query, { order, limit, after, before });
}

/**
 * The shapes of an around page's two halves and of the page as a whole: the
 * same object for every page of that pair of shapes (a name for its
 * statement), as listFilter's are.
 */
export interface AroundFilter {
  readonly name: string;
  /** The half behind the page's start: read from around outwards, against the requested order. */
  readonly behind: ListFilter;
  /** The half ahead of around: read from around outwards, in the requested order. */
  readonly ahead: ListFilter;
  /**
   * The page's shape without bounds, in the requested order: for an engine
   * that reads the page as one walk from the behind half's farthest row.
   */
  readonly whole: ListFilter;
  /** Whether the halves search (then engines may take another way to the rows). */
  readonly search: boolean;
}

/**
 * One half: a list query whose `limit` is the half's share of the page. An
 * engine reads `limit + 1` rows of it, nearest to around first, as a list
 * page does: one more says messages lie beyond. A half of size 0 (limit 1)
 * is still read for that one row.
 */
export type AroundHalf = ListQuery & { readonly limit: number };

export interface AroundHalves {
  readonly filter: AroundFilter;
  readonly behind: AroundHalf;
  readonly ahead: AroundHalf;
}

const pairs = new Map<ListFilter, Map<ListFilter, AroundFilter>>();

/** The pair's filter, made on first use (its `whole` from this page's query and order). */
function aroundFilter(
  behind: ListFilter,
  ahead: ListFilter,
  query: ListQuery & { readonly limit: number },
  forward: ListQuery['order'],
): AroundFilter {
  let byAhead = pairs.get(behind);
  if (byAhead === undefined) pairs.set(behind, (byAhead = new Map()));
  let filter = byAhead.get(ahead);
  if (filter === undefined) {
    filter = {
      name: `around(${behind.name},${ahead.name})`,
      behind,
      ahead,
      whole: listFilter(bounded(query, forward, undefined, undefined, query.limit)),
      search: behind.search,
    };
    byAhead.set(ahead, filter);
  }
  return filter;
}

/**
 * The two halves of the page of `query.limit` messages around `around` among
 * those `query` selects (its own after/before are not used: the contract
 * makes them a 400 beside `around`).
 */
export function aroundHalves(
  query: ListQuery & { readonly limit: number },
  around: string,
): AroundHalves {
  const forward = query.order;
  const backward = forward === 'asc' ? 'desc' : 'asc';
  const atOrBefore = idAfter(around);
  // Behind the page's start in the requested order, and ahead of around.
  const behindSize = forward === 'asc' ? Math.ceil(query.limit / 2) : Math.floor(query.limit / 2);
  const aheadSize = query.limit - behindSize;
  const behind =
    forward === 'asc'
      ? bounded(query, backward, undefined, atOrBefore, behindSize)
      : bounded(query, backward, around, undefined, behindSize);
  const ahead =
    forward === 'asc'
      ? bounded(query, forward, around, undefined, aheadSize)
      : bounded(query, forward, undefined, atOrBefore, aheadSize);
  const filter = aroundFilter(listFilter(behind), listFilter(ahead), query, forward);
  return { filter, behind, ahead };
}

/**
 * The page joined from its halves' rows, each nearest to around first (at
 * most `limit + 1`: the extra one only says more lie beyond): the behind
 * half turned round, then the ahead half. For the engines that read rows
 * one by one; the others join them in the database.
 */
export function joinAroundRows(
  halves: AroundHalves,
  behindRows: readonly string[],
  aheadRows: readonly string[],
  latestSeq: number,
): AroundMessagePage {
  const texts: string[] = [];
  const behindCount = Math.min(behindRows.length, halves.behind.limit);
  for (let i = behindCount - 1; i >= 0; i -= 1) texts.push(behindRows[i]!);
  const aheadCount = Math.min(aheadRows.length, halves.ahead.limit);
  for (let i = 0; i < aheadCount; i += 1) texts.push(aheadRows[i]!);
  const json = texts.join(',');
  return {
    json,
    count: texts.length,
    lastId: lastIdOfMessagesJson(json),
    more: aheadRows.length > halves.ahead.limit,
    moreBefore: behindRows.length > halves.behind.limit,
    latestSeq,
  };
}

/** The page with its links: rel="next" past its last message, rel="prev" past its first. */
export function withAroundLinks(page: AroundMessagePage, around: string): AroundPage {
  return {
    page,
    // An empty page's links start from around itself.
    next: page.more ? (page.lastId ?? around) : undefined,
    prev: page.moreBefore ? (firstIdOfMessagesJson(page.json) ?? around) : undefined,
  };
}
