/**
 * The live tail of the change log, shared by every stream of this instance.
 * Writes here (through the service) and notifications from other instances
 * (through the change log's watcher) only wake the feed; it then reads the log
 * from where it was, so a lost wake-up loses nothing, and hands each batch,
 * in sequence order, to every subscriber.
 *
 * A batch says which stretch of the log it covers (`after` < seq <= the last
 * change's seq): a subscriber that is exactly at `after` can take it as is; one
 * that is not (it was busy replaying, or its client was slow) re-reads the gap
 * from the log itself, through `changesSince`. Nobody buffers on anyone's
 * behalf, so memory stays bounded however far a subscriber falls behind.
 */
import type { Change } from './change.ts';
import type { ChangeLog, ChangeLogBounds } from './change-log.ts';

export interface ChangeBatch {
  /** The batch holds every committed change with `after` < seq <= the last one's seq. */
  readonly after: number;
  /** Non-empty, in seq order. */
  readonly changes: readonly Change[];
}

export type ChangeListener = (batch: ChangeBatch) => void;

/**
 * Kept in step with the log: loaded at start, given every batch before any
 * listener. One whose `apply` throws has missed changes: the feed resets it
 * and loads it again before the listeners get that batch; while it is not
 * loaded (its load failed: tried again later), `settling` is pending.
 */
export interface FeedFollower {
  load(): Promise<void>;
  apply(changes: readonly Change[]): void;
  /** Drops what it holds: until it is loaded again it answers nothing from what it had. */
  reset(): void;
}

/** How long a stream waits at most for the feed to reach the log's latest change. */
const REACH_TIMEOUT_MS = 2000;

const READ_BATCH = 1000;
/** After a failed read, try again this soon rather than wait for the next write. */
const RETRY_MS = 500;
/** A follower's load that keeps failing is tried again at most this far apart. */
const MAX_RELOAD_DELAY_MS = 8000;
/**
 * A safety net, not the mechanism: wake-ups come from writes and NOTIFY, but
 * re-reading the log now and then bounds the delay if one was ever lost.
 */
const POLL_MS = 5000;

export class ChangeFeed {
  readonly #log: ChangeLog;
  readonly #onError: (error: unknown) => void;
  readonly #listeners = new Set<ChangeListener>();
  readonly #followers: readonly FeedFollower[];
  /** Reset after a failed apply and not loaded since: given no batch until they are. */
  readonly #unloaded = new Set<FeedFollower>();
  readonly #waiters = new Set<{ readonly seq: number; readonly resolve: () => void }>();
  /** Pending from a follower's reset until every follower is loaded again: nobody judges by them meanwhile. */
  #settling: Promise<void> | undefined;
  #settled: (() => void) | undefined;
  /** The one timer that tries a failed load again. */
  #retry: NodeJS.Timeout | undefined;
  #reloadDelay = RETRY_MS;
  #head = 0;
  #reading = false;
  #again = false;
  #started = false;
  #stopWatching: (() => Promise<void>) | undefined;
  #poll: NodeJS.Timeout | undefined;

  constructor(
    log: ChangeLog,
    onError: (error: unknown) => void,
    followers: readonly FeedFollower[] = [],
  ) {
    this.#log = log;
    this.#onError = onError;
    this.#followers = followers;
  }

  /** The newest change this feed has handed out: a new subscriber gets every change after it. */
  get head(): number {
    return this.#head;
  }

  /**
   * Pending while a follower that missed changes is not loaded again (a
   * stream catching up waits for it rather than judge by a follower that
   * knows nothing), however many tries that takes; undefined otherwise.
   */
  get settling(): Promise<void> | undefined {
    return this.#settling;
  }

  /** Followers reset after a failed apply and not loaded since (a gauge on /metrics). */
  get unloadedFollowers(): number {
    return this.#unloaded.size;
  }

  get subscriberCount(): number {
    return this.#listeners.size;
  }

  async start(): Promise<void> {
    this.#head = (await this.#log.bounds()).latest;
    for (const follower of this.#followers) await follower.load();
    this.#started = true;
    this.#stopWatching = this.#log.watch(() => this.wake());
    this.#poll = setInterval(() => this.wake(), POLL_MS);
    this.#poll.unref();
  }

  async stop(): Promise<void> {
    this.#started = false;
    clearInterval(this.#poll);
    this.#listeners.clear();
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters.clear();
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#settle();
    await this.#stopWatching?.();
  }

  /**
   * Resolves once the feed has handed out every change up to `seq` (a change
   * committed through another instance may not have been read yet), or after
   * a short while if it cannot: true when it got there.
   */
  reached(seq: number): Promise<boolean> {
    if (this.#head >= seq || !this.#started) return Promise.resolve(this.#head >= seq);
    return new Promise((resolve) => {
      const waiter = {
        seq,
        resolve: () => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(this.#head >= seq);
        },
      };
      const timer = setTimeout(waiter.resolve, REACH_TIMEOUT_MS);
      this.#waiters.add(waiter);
      this.wake();
    });
  }

  /** Every batch after the current head goes to `listener`, in order, until the returned function is called. */
  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Something may have been committed: read the log past the head. */
  wake(): void {
    if (!this.#started) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#drain();
  }

  /** The log's bounds, read from the store now (not the feed's head). */
  bounds(): Promise<ChangeLogBounds> {
    return this.#log.bounds();
  }

  /** Up to `limit` committed changes with seq > `after`, read from the store (replays, catch-up). */
  changesSince(after: number, limit: number): Promise<Change[]> {
    return this.#log.since(after, limit);
  }

  async #drain(): Promise<void> {
    try {
      do {
        this.#again = false;
        for (;;) {
          // A load that failed is tried again by its own timer, not by every wake meanwhile.
          if (this.#unloaded.size > 0 && this.#retry === undefined) await this.#loadAgain();
          const after = this.#head;
          const changes = await this.#log.since(after, READ_BATCH);
          if (changes.length === 0 || !this.#started) break;
          const purgedThrough =
            changes[0]!.seq > after + 1 ? await this.#purgedPast(after) : undefined;
          if (!this.#started) break;
          // Before the followers get the batch: one that loads meanwhile (a room's window) reads
          // the log up to the head, the batch included, as it will not be handed the batch.
          this.#head = changes[changes.length - 1]!.seq;
          // A follower's failure is its own: the batch goes to the listeners and waiters once
          // the follower that missed part of it is loaded again, or its load failed. Until it is
          // loaded, `settling` is pending: a stream that judges by it waits (late, never lost).
          if (purgedThrough !== undefined) {
            this.#resetFollowers(new Error(`changes after ${after} were purged unseen`));
          }
          const failed = this.#follow(changes);
          if ((failed || purgedThrough !== undefined) && this.#retry === undefined) {
            await this.#loadAgain();
          }
          // The batch holds what the log still has: a stream that was at `after` re-reads the
          // gap itself, finds it purged and tells its client (a reset).
          this.#handOut({ after: purgedThrough ?? after, changes });
          if (changes.length < READ_BATCH) break;
        }
      } while (this.#again);
    } catch (error) {
      this.#onError(error);
      setTimeout(() => this.wake(), RETRY_MS).unref();
    } finally {
      this.#reading = false;
    }
  }

  #handOut(batch: ChangeBatch): void {
    for (const listener of this.#listeners) {
      try {
        listener(batch);
      } catch (error) {
        this.#onError(error);
      }
    }
    const head = batch.changes[batch.changes.length - 1]!.seq;
    for (const waiter of this.#waiters) if (waiter.seq <= head) waiter.resolve();
  }

  /**
   * Where the log was purged through, if past `after`: a gap in the sequence
   * is usually a write that rolled back, but it is also what a feed that fell
   * behind by more than the log keeps sees. Its followers missed those changes.
   */
  async #purgedPast(after: number): Promise<number | undefined> {
    const { purgedThrough } = await this.#log.bounds();
    return purgedThrough > after ? purgedThrough : undefined;
  }

  /** Resets every loaded follower, as if each had failed to apply a batch (reported once). */
  #resetFollowers(reason: Error): void {
    this.#onError(reason);
    for (const follower of this.#followers) {
      if (!this.#unloaded.has(follower)) this.#unload(follower);
    }
  }

  /** Hands the batch to each loaded follower; true when one failed (reported, and reset). */
  #follow(changes: readonly Change[]): boolean {
    let failed = false;
    for (const follower of this.#followers) {
      if (this.#unloaded.has(follower)) continue;
      try {
        follower.apply(changes);
      } catch (error) {
        this.#onError(error);
        this.#unload(follower);
        failed = true;
      }
    }
    return failed;
  }

  #unload(follower: FeedFollower): void {
    follower.reset();
    this.#unloaded.add(follower);
    this.#settling ??= new Promise((resolve) => (this.#settled = resolve));
  }

  /**
   * Loads the followers that were reset. Their load reads the store as it is
   * now, past the head, as at start. One that fails stays unloaded and is
   * tried again by one timer, later after each failure (up to
   * MAX_RELOAD_DELAY_MS), not at every wake.
   */
  async #loadAgain(): Promise<void> {
    let failed = false;
    // Each is tried, whatever the others do: one left unloaded gets no batch meanwhile.
    for (const follower of [...this.#unloaded]) {
      try {
        await follower.load();
        this.#unloaded.delete(follower);
      } catch (error) {
        this.#onError(error);
        failed = true;
      }
    }
    if (failed) {
      this.#retryLater();
      return;
    }
    this.#reloadDelay = RETRY_MS;
    this.#settle();
  }

  #retryLater(): void {
    if (this.#retry !== undefined || !this.#started) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.wake();
    }, this.#reloadDelay);
    this.#retry.unref();
    this.#reloadDelay = Math.min(this.#reloadDelay * 2, MAX_RELOAD_DELAY_MS);
  }

  #settle(): void {
    const settled = this.#settled;
    this.#settling = undefined;
    this.#settled = undefined;
    settled?.();
  }
}
