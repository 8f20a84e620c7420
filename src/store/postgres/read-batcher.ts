/**
 * Reads by id, batched per turn of the event loop. On PostgreSQL each query
 * costs a round trip: a socket write and read, and node-postgres' work around
 * them, which made the per-request CPU of GET by id three times that of
 * SQLite (profiled). The gets asked for in one turn go out as one query for
 * all their ids; each caller gets its own row. Gets never fail alone (a
 * select by id has no row-level errors): a failed query fails its batch.
 * With `batching` off (BATCHING=off, for A/B runs) each get is a query of
 * its own. How this fits with the other per-turn schedulers: docs/schedulers.md.
 */

/** Enough for every connection of a busy instance, small enough for one index scan. */
const MAX_BATCH = 200;

interface Pending<R> {
  readonly id: string;
  readonly resolve: (row: R | undefined) => void;
  readonly reject: (error: unknown) => void;
}

export class ReadBatcher<R extends { readonly id: string }> {
  readonly #fetch: (ids: readonly string[]) => Promise<readonly R[]>;
  readonly #batching: boolean;
  #queue: Pending<R>[] = [];

  /** `fetch` reads the rows of these ids (any order; ids not stored are simply absent). */
  constructor(fetch: (ids: readonly string[]) => Promise<readonly R[]>, batching = true) {
    this.#fetch = fetch;
    this.#batching = batching;
  }

  get(id: string): Promise<R | undefined> {
    if (!this.#batching) return this.#fetch([id]).then((rows) => rows[0]);
    return new Promise((resolve, reject) => {
      if (this.#queue.length === 0) setImmediate(this.#flush);
      this.#queue.push({ id, resolve, reject });
    });
  }

  readonly #flush = (): void => {
    const all = this.#queue;
    this.#queue = [];
    for (let start = 0; start < all.length; start += MAX_BATCH) {
      const batch = all.slice(start, start + MAX_BATCH);
      const ids = [...new Set(batch.map((p) => p.id))];
      this.#fetch(ids).then(
        (rows) => {
          const byId = new Map(rows.map((row) => [row.id, row]));
          for (const p of batch) p.resolve(byId.get(p.id));
        },
        (error: unknown) => {
          for (const p of batch) p.reject(error);
        },
      );
    }
  };
}
