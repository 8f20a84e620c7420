/**
 * `around=<id>`: the page centred on a message (where a quote or a search hit
 * jumps to). It is read as two keyset pages of the list's own shapes, side by
 * side, so it uses the indexes a history page uses and reads about as many
 * rows: the ⌈n/2⌉ messages with id <= around, read from around backwards,
 * and the ⌊n/2⌋ after it, read forwards (for `order=desc` the halves swap
 * directions). The half read against the requested order is turned round.
 *
 * "id <= around" is "id < the id right after around": ids are 128-bit
 * numbers written as fixed-width lowercase hex, so the next number is the
 * next possible id on every engine, and no engine needs an inclusive bound.
 */
import type { ListQuery } from './message.ts';
import { lastIdOfMessagesJson, splitMessagesJson } from './message-json.ts';
import type { MessagePage } from './message-store.ts';

/** The page size of `around` when no `limit` is given. */
export const AROUND_DEFAULT_LIMIT = 50;

export interface AroundPage {
  /** The messages in the requested order; `latestSeq` is the first read's (Event-Seq). */
  readonly page: MessagePage;
  /** The bound for rel="next" (messages lie beyond it in the requested order), else undefined. */
  readonly next: string | undefined;
  /** The bound for rel="prev" (messages lie beyond it in the other order), else undefined. */
  readonly prev: string | undefined;
}

type ReadPage = (query: ListQuery & { readonly limit: number }) => Promise<MessagePage>;

const ID_DIGITS = 32;
const MAX_ID = (1n << 128n) - 1n;

function idNumber(id: string): bigint {
  return BigInt(`0x${id.replaceAll('-', '')}`);
}

function idText(n: bigint): string {
  const hex = n.toString(16).padStart(ID_DIGITS, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The smallest id greater than `id` (lowercase), or undefined for the largest id. */
export function idAfter(id: string): string | undefined {
  const n = idNumber(id);
  return n === MAX_ID ? undefined : idText(n + 1n);
}

/** The greatest id smaller than `id` (lowercase), or undefined for the smallest id. */
export function idBefore(id: string): string | undefined {
  const n = idNumber(id);
  return n === 0n ? undefined : idText(n - 1n);
}

/** The query with these exclusive bounds (an undefined one is no bound). */
function bounded(
  query: ListQuery,
  order: ListQuery['order'],
  bounds: { after?: string | undefined; before?: string | undefined },
  limit: number,
): ListQuery & { readonly limit: number } {
  const out: { -readonly [K in keyof ListQuery]: ListQuery[K] } & { limit: number } = {
    ...query,
    order,
    limit,
  };
  delete out.after;
  delete out.before;
  if (bounds.after !== undefined) out.after = bounds.after;
  if (bounds.before !== undefined) out.before = bounds.before;
  return out;
}

/** The texts of messages joined by commas (see message-json.ts), in reverse order. */
function reversed(json: string): string {
  return splitMessagesJson(json).reverse().join(',');
}

/**
 * The page of `limit` messages around `around` among those `query` selects
 * (its own after/before are not used: the contract makes them a 400 beside
 * `around`), in `query.order`.
 */
export async function readAroundPage(
  read: ReadPage,
  query: ListQuery,
  around: string,
  limit: number,
): Promise<AroundPage> {
  const forward = query.order;
  const backward = forward === 'asc' ? 'desc' : 'asc';
  const atOrBefore = { before: idAfter(around) };
  const after = { after: around };
  // Behind the page's start in the requested order, and ahead of around.
  const behindSize = forward === 'asc' ? Math.ceil(limit / 2) : Math.floor(limit / 2);
  const aheadSize = limit - behindSize;
  // A half of size 0 (limit 1) is still read for one row: whether anything lies there.
  const [behind, ahead] = await Promise.all([
    read(bounded(query, backward, forward === 'asc' ? atOrBefore : after, Math.max(behindSize, 1))),
    read(bounded(query, forward, forward === 'asc' ? after : atOrBefore, Math.max(aheadSize, 1))),
  ]);
  const behindJson = behindSize === 0 ? '' : behind.json;
  const aheadJson = aheadSize === 0 ? '' : ahead.json;
  const json = [reversed(behindJson), aheadJson].filter((part) => part !== '').join(',');
  const count = (behindSize === 0 ? 0 : behind.count) + (aheadSize === 0 ? 0 : ahead.count);
  const lastId = lastIdOfMessagesJson(json);
  // Beyond the page's last message (same order) and its first (the other order).
  const beyondLast = aheadSize === 0 ? ahead.count > 0 : ahead.more;
  const beyondFirst = behindSize === 0 ? behind.count > 0 : behind.more;
  const firstId = behindSize === 0 || behind.count === 0 ? firstIdOf(json) : behind.lastId;
  return {
    page: {
      json,
      count,
      lastId,
      more: beyondLast,
      latestSeq: Math.min(behind.latestSeq, ahead.latestSeq),
    },
    next: beyondLast ? (lastId ?? around) : undefined,
    prev: beyondFirst ? (firstId ?? around) : undefined,
  };
}

function firstIdOf(json: string): string | undefined {
  return lastIdOfMessagesJson(splitMessagesJson(json)[0] ?? '');
}
