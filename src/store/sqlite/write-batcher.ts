/**
 * Group commit. Writes that arrive while the process is busy (committing,
 * or parsing other requests) are queued and run together in one transaction,
 * so one fsync makes all of them durable. Each write runs in its own
 * savepoint: a write that throws fails only its own request. A failure of
 * the transaction itself (the disk, the commit) fails every write of it:
 * none of them was committed.
 *
 * A batch's writes are answered only once `afterCommit` says the commit is
 * durable; the store does that off the event loop (see wal-sync.ts), so the
 * next batch is parsed, run and committed while the disk flushes this one.
 *
 * With `batching` off (BATCHING=off, for A/B runs) each write runs at once,
 * in a transaction of its own. How this fits with the other per-turn
 * schedulers: docs/schedulers.md.
 *
 * A write may leave work for the end of its transaction (`atCommit`): it
 * runs after the batch's last savepoint, right before COMMIT, in the order
 * it was left, and is dropped with its write when that write fails. The
 * search index needs it: FTS5 writes its pending terms out as a new segment
 * at every SAVEPOINT once it was written in a transaction, so an index
 * insert inside each write's savepoint made every following write of the
 * batch flush a segment (about 40 µs per create, measured); left for the
 * commit, a batch's inserts are written out once.
 *
 * The control statements are prepared once: better-sqlite3's
 * `db.transaction(fn)` builds four wrapper functions per call, which a
 * profile showed on every write.
 */
import type { Database, Statement } from 'better-sqlite3';

export interface WriteBatcherOptions {
  /** False: every write at once, alone in its transaction (default true). */
  readonly batching?: boolean;
  /** Turns driver errors into catalogued ones before a request sees them. */
  readonly mapError: (error: unknown) => unknown;
  /** Runs before each group transaction begins (the store ends its read snapshot). */
  readonly beforeTransaction?: () => void;
  /**
   * Runs right after each commit. The batch's writes are answered when the
   * promise it returns resolves (or all fail with its error); undefined
   * means at once.
   */
  readonly afterCommit?: () => Promise<void> | undefined;
}

interface QueuedWrite {
  readonly run: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** More writes than this in one transaction would only delay the first ones' answers. */
const MAX_BATCH = 256;

/** Marks a write that threw (its error is in the same slot of `errors`). */
const FAILED = Symbol('failed');

export class WriteBatcher {
  readonly #db: Database;
  readonly #mapError: (error: unknown) => unknown;
  readonly #begin: Statement;
  readonly #commit: Statement;
  readonly #rollback: Statement;
  readonly #savepoint: Statement;
  readonly #release: Statement;
  readonly #rollbackTo: Statement;
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  /** The running batch's work left for its commit; undefined outside a write. */
  #atCommit: (() => void)[] | undefined;
  readonly #batching: boolean;

  readonly #beforeTransaction: () => void;
  readonly #afterCommit: () => Promise<void> | undefined;

  constructor(db: Database, options: WriteBatcherOptions) {
    this.#db = db;
    this.#mapError = options.mapError;
    this.#batching = options.batching ?? true;
    this.#beforeTransaction = options.beforeTransaction ?? (() => undefined);
    this.#afterCommit = options.afterCommit ?? (() => undefined);
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT write');
    this.#release = db.prepare('RELEASE write');
    this.#rollbackTo = db.prepare('ROLLBACK TO write');
  }

  /** Runs `write` inside a group transaction; resolves once that transaction is committed. */
  submit<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#batching) this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#flush);
      }
    });
  }

  /** Leaves `work` for the end of the running write's transaction (see the file comment). */
  atCommit(work: () => void): void {
    if (this.#atCommit === undefined) throw new Error('atCommit outside a write');
    this.#atCommit.push(work);
  }

  readonly #flush = (): void => {
    let batch: QueuedWrite[];
    if (this.#queue.length <= MAX_BATCH) {
      batch = this.#queue;
      this.#queue = [];
      this.#scheduled = false;
    } else {
      batch = this.#queue.splice(0, MAX_BATCH);
      setImmediate(this.#flush);
    }
    const values: unknown[] = new Array(batch.length);
    const errors: unknown[] = new Array(batch.length);
    let lost: { error: unknown } | undefined;
    try {
      this.#beforeTransaction();
      this.#begin.run();
    } catch (error) {
      this.#fail(batch, values, errors, error);
      return;
    }
    const atCommit: (() => void)[] = [];
    this.#atCommit = atCommit;
    for (let i = 0; i < batch.length; i++) {
      const left = atCommit.length;
      try {
        this.#savepoint.run();
        values[i] = batch[i]!.run();
        this.#release.run();
      } catch (error) {
        values[i] = FAILED;
        errors[i] = error;
        atCommit.length = left;
        // Some errors (a full disk, an I/O error) end the whole transaction.
        if (!this.#db.inTransaction) {
          lost = { error };
          break;
        }
        try {
          this.#rollbackTo.run();
          this.#release.run();
        } catch (undoError) {
          lost = { error: undoError };
          break;
        }
      }
    }
    this.#atCommit = undefined;
    if (lost === undefined) {
      try {
        for (const work of atCommit) work();
        this.#commit.run();
      } catch (error) {
        lost = { error };
      }
    }
    if (lost !== undefined) {
      if (this.#db.inTransaction) {
        try {
          this.#rollback.run();
        } catch {
          // The transaction is gone either way; its writes fail below.
        }
      }
      this.#fail(batch, values, errors, lost.error);
      return;
    }
    let durable: Promise<void> | undefined;
    try {
      durable = this.#afterCommit();
    } catch (error) {
      durable = Promise.reject(error);
    }
    if (durable === undefined) this.#answer(batch, values, errors);
    else {
      durable.then(
        () => this.#answer(batch, values, errors),
        // Committed, but not known to be on disk: no 2xx for any of them.
        (error: unknown) => this.#fail(batch, values, errors, error),
      );
    }
  };

  #answer(batch: QueuedWrite[], values: unknown[], errors: unknown[]): void {
    for (let i = 0; i < batch.length; i++) {
      const write = batch[i]!;
      if (values[i] === FAILED) write.reject(this.#mapError(errors[i]));
      else write.resolve(values[i]);
    }
  }

  /** Nothing of this batch was committed: a write that threw gets its own error, the rest `error`. */
  #fail(batch: QueuedWrite[], values: unknown[], errors: unknown[], error: unknown): void {
    const mapped = this.#mapError(error);
    for (let i = 0; i < batch.length; i++) {
      batch[i]!.reject(values[i] === FAILED ? this.#mapError(errors[i]) : mapped);
    }
  }
}
