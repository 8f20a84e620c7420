/**
 * Group commit of creates on PostgreSQL. Every write takes the change log's
 * advisory lock until it commits (see migrations.ts), so concurrent creates
 * commit one after another, each paying its own WAL flush. Creates that
 * arrive while one is in flight are sent together as the next batch: one
 * call of create_messages(), one transaction, one flush. Each create is
 * answered only after its batch committed.
 *
 * When the batch fails because of some of its rows, only those fail. A claim
 * that is no longer held, a reply to no message of its room and a room
 * private to its reader come with the places of every row that breaks that
 * rule (create_messages, migration 11): those rows get the error and the rest
 * go again as one batch. Other row errors (a duplicate id, a value the
 * database refuses) name no row: the batch is then retried row by row. A
 * failure of the database itself (connection lost, timeout, disk full) fails
 * the batch: each of its requests gets the error it would have got alone.
 * A create whose request was answered (its store timeout ran out) before its
 * batch was sent is never sent; nor are those queued behind a batch the
 * database did not answer in time.
 *
 * With `batching` off (BATCHING=off, for A/B runs) each create is sent at
 * once, alone, as if there were no batcher. How this fits with the other
 * per-turn schedulers: docs/schedulers.md.
 */

import { CLAIM_LOST, coded, hasCode, PRIVATE_ROOM, REPLY_TARGET } from './errors.ts';

/** One create's parameters of create_messages(), in its column order. */
export type CreateRow = readonly unknown[];

export interface CreateBatcherOptions {
  /** One create alone (its errors as the request should see them). */
  readonly one: (row: CreateRow) => Promise<void>;
  /** Several creates in one transaction, all or nothing. */
  readonly many: (rows: readonly CreateRow[]) => Promise<void>;
  /** False: every create at once, alone (default true). */
  readonly batching?: boolean;
  /**
   * A batch's failure after which the creates queued behind it fail with it
   * (the store did not answer it within the whole store timeout).
   */
  readonly failsQueue?: (error: unknown) => boolean;
}

interface Pending {
  readonly row: CreateRow;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  /** Aborts once the request was answered without it (its store timeout ran out). */
  readonly signal: AbortSignal | undefined;
}

/** Whether `p` may still be sent; one whose request was answered is failed here instead. */
function stillAsked(p: Pending): boolean {
  if (p.signal?.aborted !== true) return true;
  p.reject(p.signal.reason);
  return false;
}

/** Enough to share one flush among all the connections of a busy instance. */
const MAX_BATCH = 100;

/**
 * SQLSTATE classes a single row causes: data exceptions, integrity
 * violations, a lost claim, a reply to no message of its room, a room private
 * to the row's reader.
 */
function isRowError(error: unknown): boolean {
  return hasCode(
    error,
    (code) =>
      /^(22|23)...$/.test(code) ||
      code === CLAIM_LOST ||
      code === REPLY_TARGET ||
      code === PRIVATE_ROOM,
  );
}

const NAMED_ROWS = new Set([CLAIM_LOST, REPLY_TARGET, PRIVATE_ROOM]);

/**
 * The places (from 0) of the rows a failure of `size` rows names, or
 * undefined when it names none it could mean (another error, no detail).
 */
export function failingPlaces(error: unknown, size: number): Set<number> | undefined {
  const named = coded(error, (code) => NAMED_ROWS.has(code));
  const detail = (named as { detail?: unknown } | undefined)?.detail;
  if (typeof detail !== 'string' || !/^\d+(,\d+)*$/.test(detail)) return undefined;
  const places = new Set(detail.split(',').map((n) => Number(n) - 1));
  for (const place of places) if (place < 0 || place >= size) return undefined;
  return places;
}

export class CreateBatcher {
  readonly #options: CreateBatcherOptions;
  #queue: Pending[] = [];
  #inFlight = false;

  constructor(options: CreateBatcherOptions) {
    this.#options = options;
  }

  /**
   * `row` in the next batch. Once `signal` aborts (its request was answered
   * with a 503), a row not sent yet leaves the queue: it is never committed.
   */
  submit(row: CreateRow, signal?: AbortSignal): Promise<void> {
    if (this.#options.batching === false) return this.#options.one(row);
    return new Promise<void>((resolve, reject) => {
      const pending: Pending = { row, resolve, reject, signal };
      this.#queue.push(pending);
      signal?.addEventListener(
        'abort',
        () => {
          const place = this.#queue.indexOf(pending);
          if (place === -1) return;
          this.#queue.splice(place, 1);
          reject(signal.reason);
        },
        { once: true },
      );
      if (!this.#inFlight) {
        this.#inFlight = true;
        // Creates parsed in the same turn of the event loop go in the first batch too.
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    try {
      await this.#drain();
    } finally {
      this.#inFlight = false;
      if (this.#queue.length > 0) {
        this.#inFlight = true;
        setImmediate(() => void this.#flush());
      }
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_BATCH);
      try {
        if (batch.length === 1) await this.#options.one(batch[0]!.row);
        else await this.#options.many(batch.map((p) => p.row));
        for (const p of batch) p.resolve();
      } catch (error) {
        await this.#settleApart(batch, error);
      }
    }
  }

  /** A batch that failed: each row gets its own outcome, the others' together where known. */
  async #settleApart(batch: readonly Pending[], error: unknown): Promise<void> {
    let pending = batch;
    let failure = error;
    // Each turn fails at least one row: it ends.
    for (;;) {
      if (!isRowError(failure)) {
        for (const p of pending) p.reject(failure);
        // The store left a batch unanswered for the whole store timeout: the creates behind
        // it are answered 503 now, and never sent, rather than each sent to a store most
        // likely still stuck, shortly before its own deadline answers it with a 503, to
        // commit after it. One submitted just before fails early: its retry decides.
        if (this.#options.failsQueue?.(failure) === true) {
          for (const p of this.#queue.splice(0)) p.reject(failure);
        }
        return;
      }
      if (pending.length === 1) {
        pending[0]!.reject(failure);
        return;
      }
      const failing = failingPlaces(failure, pending.length);
      // A batch that failed committed nothing: a row sent again is a new commit, which a row
      // whose request was answered meanwhile must not make.
      if (failing === undefined) {
        for (const p of pending) {
          if (stillAsked(p)) await this.#options.one(p.row).then(p.resolve, p.reject);
        }
        return;
      }
      const rest = pending.filter((p, place) => {
        if (failing.has(place)) p.reject(failure);
        return !failing.has(place) && stillAsked(p);
      });
      if (rest.length <= 1) {
        for (const p of rest) await this.#options.one(p.row).then(p.resolve, p.reject);
        return;
      }
      try {
        await this.#options.many(rest.map((p) => p.row));
        for (const p of rest) p.resolve();
        return;
      } catch (again) {
        pending = rest;
        failure = again;
      }
    }
  }
}
