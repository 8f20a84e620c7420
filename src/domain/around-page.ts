/**
 * `around=<id>`: the page centred on a message (where a quote or a search hit
 * jumps to). It is read as two keyset pages of the list's own shapes, so it
 * uses the indexes a history page uses and costs about two of them:
 *
 * 1. the half on the far side of the requested order, read towards `around`'s
 *    other side (for `asc`: the ⌈n/2⌉ messages with id <= around, newest
 *    first), which finds where the page starts;
 * 2. the whole page from that start, in the requested order.
 *
 * "id <= around" is "id < the id right after around": ids are 128-bit
 * numbers written as fixed-width lowercase hex, so the next number is the
 * next possible id on every engine, and no engine needs an inclusive bound.
 * Like every page it is not a snapshot: a message created or deleted between
 * the two reads may shift it by one.
 */
import type { ListQuery } from './message.ts';
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
  // ⌈n/2⌉ with id <= around, ⌊n/2⌋ after it; the half read first lies behind the page's start.
  const behindSize = forward === 'asc' ? Math.ceil(limit / 2) : Math.floor(limit / 2);
  const aheadSize = limit - behindSize;
  const behindBound = forward === 'asc' ? { before: idAfter(around) } : { after: around };
  // A half of size 0 (limit 1, desc) is still read for one row: whether anything lies there.
  const behind = await read(bounded(query, backward, behindBound, Math.max(behindSize, 1)));
  const behindCount = behindSize === 0 ? 0 : behind.count;
  const start = behindCount === 0 ? undefined : behind.lastId;

  const fromStart =
    start === undefined
      ? forward === 'asc'
        ? { after: around }
        : { before: idAfter(around) }
      : forward === 'asc'
        ? { after: idBefore(start) }
        : { before: idAfter(start) };
  const pageSize = behindCount + aheadSize;
  const page =
    pageSize === 0
      ? { json: '', count: 0, lastId: undefined, more: false, latestSeq: behind.latestSeq }
      : await read(bounded(query, forward, fromStart, pageSize));

  // rel="next": beyond the page's last message. An empty page of size 0 (limit 1, asc, nothing
  // at or before around) still leads on from around when anything lies after it.
  let next = page.more ? page.lastId : undefined;
  if (pageSize === 0) {
    const after = await read(bounded(query, forward, { after: around }, 1));
    next = after.count > 0 ? around : undefined;
  }
  // rel="prev": beyond the page's first message, in the other order.
  const beyondFirst = behindSize === 0 ? behind.count > 0 : behind.more;
  // Without a half behind, the page holds at most one message (limit 1): it is the first.
  const first = start ?? page.lastId ?? around;
  return {
    page: { ...page, latestSeq: behind.latestSeq },
    next,
    prev: beyondFirst ? first : undefined,
  };
}
