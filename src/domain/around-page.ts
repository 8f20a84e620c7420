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
import { firstIdOfMessagesJson, lastIdOfMessagesJson, splitMessagesJson } from './message-json.ts';
import type { MessagePage } from './message-store.ts';

/** The page size of `around` when no `limit` is given. */
export const AROUND_DEFAULT_LIMIT = 50;

export interface AroundPage {
  /** The messages in the requested order; `latestSeq` is the earlier of the two reads' (Event-Seq). */
  readonly page: MessagePage;
  /** The bound for rel="next" (messages lie beyond it in the requested order), else undefined. */
  readonly next: string | undefined;
  /** The bound for rel="prev" (messages lie beyond it in the other order), else undefined. */
  readonly prev: string | undefined;
}

type ReadPage = (query: ListQuery & { readonly limit: number }) => Promise<MessagePage>;

const HEX = '0123456789abcdef';

/** `id` (lowercase) plus `step` (1 or -1) as a 128-bit number, or undefined past either end. */
function stepId(id: string, step: 1 | -1): string | undefined {
  const chars = id.toLowerCase().split('');
  const carryFrom = step === 1 ? 'f' : '0';
  for (let i = chars.length - 1; i >= 0; i -= 1) {
    const c = chars[i]!;
    if (c === '-') continue;
    if (c !== carryFrom) {
      chars[i] = HEX[HEX.indexOf(c) + step]!;
      return chars.join('');
    }
    chars[i] = step === 1 ? '0' : 'f';
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

/** The query with these exclusive bounds (an undefined one is no bound). */
function bounded(
  query: ListQuery,
  order: ListQuery['order'],
  bounds: { after?: string | undefined; before?: string | undefined },
  limit: number,
): ListQuery & { readonly limit: number } {
  const { after, before, ...filters } = query;
  return {
    ...filters,
    order,
    limit,
    ...(bounds.after === undefined ? {} : { after: bounds.after }),
    ...(bounds.before === undefined ? {} : { before: bounds.before }),
  };
}

/** The page's messages in reverse order, joined as a page's texts are. */
function reversed(page: MessagePage): string {
  return splitMessagesJson(page.json).reverse().join(',');
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
  const behindJson = behindSize === 0 || behind.count === 0 ? '' : reversed(behind);
  const aheadJson = aheadSize === 0 ? '' : ahead.json;
  const json =
    behindJson === '' ? aheadJson : aheadJson === '' ? behindJson : `${behindJson},${aheadJson}`;
  const count = (behindSize === 0 ? 0 : behind.count) + (aheadSize === 0 ? 0 : ahead.count);
  const lastId = lastIdOfMessagesJson(json);
  // Beyond the page's last message (same order) and its first (the other order).
  const beyondLast = aheadSize === 0 ? ahead.count > 0 : ahead.more;
  const beyondFirst = behindSize === 0 ? behind.count > 0 : behind.more;
  const firstId =
    behindSize === 0 || behind.count === 0 ? firstIdOfMessagesJson(json) : behind.lastId;
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
