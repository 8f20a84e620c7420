/**
 * List pages, batched per turn of the event loop, as read-batcher.ts does
 * for gets. On PostgreSQL each page is a round trip, and node-postgres' work
 * around one (a socket write and read, parsing, the pool) cost more of the
 * service's CPU than the page itself (profiled: about 100 µs). Pages of the
 * same shape asked for in one turn go out as one statement (list-sql.ts's
 * listBatchSql: one index walk per page, in one snapshot); each caller gets
 * its own page; around pages (aroundBatchSql) are batched the same way, per
 * pair of shapes. A failed statement fails its batch. With `batching` off
 * (BATCHING=off, for A/B runs) each page is a query of its own. How this fits
 * with the other per-turn schedulers: docs/schedulers.md.
 */
import type { ListFilter } from '../../domain/list-filter.ts';

/** A page as the database answers it. */
export interface PageRow {
  readonly latest: string;
  /** At most limit + 1. */
  readonly count: number;
  readonly json: string | null;
}

/**
 * `Shape`: what makes pages share a statement (a list's filter, an around
 * page's pair of them); `Row`: a page as its statement answers it.
 */
export interface PageBatcherOptions<Shape extends object = ListFilter, Row = PageRow> {
  readonly batching: boolean;
  /** One page alone. */
  readonly one: (shape: Shape, values: readonly unknown[]) => Promise<Row>;
  /** Several pages of one shape: each query's values, answered with `n`, its 1-based place. */
  readonly many: (
    shape: Shape,
    values: readonly (readonly unknown[])[],
  ) => Promise<readonly (Row & { readonly n: string })[]>;
}

/** Enough for every connection of a busy instance; one statement of that many index walks. */
const MAX_BATCH = 64;

interface Pending<Row> {
  readonly values: readonly unknown[];
  readonly resolve: (row: Row) => void;
  readonly reject: (error: unknown) => void;
}

export class PageBatcher<Shape extends object = ListFilter, Row = PageRow> {
  readonly #options: PageBatcherOptions<Shape, Row>;
  #queues = new Map<Shape, Pending<Row>[]>();

  constructor(options: PageBatcherOptions<Shape, Row>) {
    this.#options = options;
  }

  page(filter: Shape, values: readonly unknown[]): Promise<Row> {
    if (!this.#options.batching) return this.#options.one(filter, values);
    return new Promise((resolve, reject) => {
      if (this.#queues.size === 0) setImmediate(this.#flush);
      let queue = this.#queues.get(filter);
      if (queue === undefined) this.#queues.set(filter, (queue = []));
      queue.push({ values, resolve, reject });
    });
  }

  readonly #flush = (): void => {
    const queues = this.#queues;
    this.#queues = new Map();
    for (const [filter, all] of queues) {
      for (let start = 0; start < all.length; start += MAX_BATCH) {
        const batch = all.slice(start, start + MAX_BATCH);
        if (batch.length === 1) {
          const [only] = batch;
          this.#options.one(filter, only!.values).then(only!.resolve, only!.reject);
          continue;
        }
        this.#options
          .many(
            filter,
            batch.map((p) => p.values),
          )
          .then(
            (rows) => {
              for (const row of rows) batch[Number(row.n) - 1]!.resolve(row);
            },
            (error: unknown) => {
              for (const p of batch) p.reject(error);
            },
          );
      }
    }
  };
}
