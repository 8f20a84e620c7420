/**
 * Group commit. Writes that arrive while the process is busy (committing,
 * or parsing other requests) are queued and run together in one transaction,
 * so one fsync makes all of them durable. Each write runs in its own
 * savepoint: a write that throws fails only its own request.
 */
import type { Database } from 'better-sqlite3';

interface QueuedWrite {
  readonly run: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** More writes than this in one transaction would only delay the first ones' answers. */
const MAX_BATCH = 256;

export class WriteBatcher {
  readonly #db: Database;
  readonly #mapError: (error: unknown) => unknown;
  #queue: QueuedWrite[] = [];
  #scheduled = false;

  constructor(db: Database, mapError: (error: unknown) => unknown) {
    this.#db = db;
    this.#mapError = mapError;
  }

  /** Runs `write` inside a group transaction; resolves once that transaction is committed. */
  submit<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const batch = this.#queue.splice(0, MAX_BATCH);
    if (this.#queue.length > 0) setImmediate(() => this.#flush());
    else this.#scheduled = false;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.#db
        .transaction(() => {
          for (const write of batch) {
            try {
              outcomes.push({ ok: true, value: this.#db.transaction(write.run)() });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
    } catch (error) {
      const mapped = this.#mapError(error);
      for (const write of batch) write.reject(mapped);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(this.#mapError(outcome.error));
    });
  }
}
