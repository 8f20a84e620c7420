/**
 * Group commit of creates on PostgreSQL. Every write takes the change log's
 * advisory lock until it commits (see migrations.ts), so concurrent creates
 * commit one after another, each paying its own WAL flush. Creates that
 * arrive while one is in flight are sent together as the next batch: one
 * call of create_messages(), one transaction, one flush. Each create is
 * answered only after its batch committed.
 *
 * When the batch fails because of one of its rows (a claim that is no longer
 * held, a reply to no message of its room, a room private to its reader, a duplicate id, a value the database refuses), it is retried row by
 * row, so a failing row fails only its own request. A failure of the
 * database itself (connection lost, timeout, disk full) fails the batch:
 * each of its requests gets the error it would have got alone.
 *
 * With `batching` off (BATCHING=off, for A/B runs) each create is sent at
 * once, alone, as if there were no batcher. How this fits with the other
 * per-turn schedulers: docs/schedulers.md.
 */

import { CLAIM_LOST, hasCode, PRIVATE_ROOM, REPLY_TARGET } from './errors.ts';

/** One create's parameters of create_messages(), in its column order. */
export type CreateRow = readonly unknown[];

export interface CreateBatcherOptions {
  /** One create alone (its errors as the request should see them). */
  readonly one: (row: CreateRow) => Promise<void>;
  /** Several creates in one transaction, all or nothing. */
  readonly many: (rows: readonly CreateRow[]) => Promise<void>;
  /** False: every create at once, alone (default true). */
  readonly batching?: boolean;
}

interface Pending {
  readonly row: CreateRow;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
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

export class CreateBatcher {
  readonly #options: CreateBatcherOptions;
  #queue: Pending[] = [];
  #inFlight = false;

  constructor(options: CreateBatcherOptions) {
    this.#options = options;
  }

  submit(row: CreateRow): Promise<void> {
    if (this.#options.batching === false) return this.#options.one(row);
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ row, resolve, reject });
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
      if (batch.length === 1) {
        const [only] = batch;
        await this.#options.one(only!.row).then(only!.resolve, only!.reject);
        continue;
      }
      try {
        await this.#options.many(batch.map((p) => p.row));
        for (const p of batch) p.resolve();
      } catch (error) {
        if (!isRowError(error)) {
          for (const p of batch) p.reject(error);
          continue;
        }
        for (const p of batch) await this.#options.one(p.row).then(p.resolve, p.reject);
      }
    }
  }
}
