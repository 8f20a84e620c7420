/**
 * The live tail of the change log, shared by every stream of this instance.
 * Writes here (through the service) and notifications from other instances
 * (through the store's watcher) only wake the feed; it then reads the log
 * from where it was, so a lost wake-up loses nothing, and hands each batch,
 * in sequence order, to every subscriber.
 */
import type { Change } from './change.ts';
import type { MessageStore } from './message-store.ts';

export type ChangeListener = (changes: readonly Change[]) => void;

const READ_BATCH = 1000;

export class ChangeFeed {
  readonly #store: MessageStore;
  readonly #onError: (error: unknown) => void;
  readonly #listeners = new Set<ChangeListener>();
  #head = 0;
  #reading = false;
  #again = false;
  #started = false;
  #stopWatching: (() => Promise<void>) | undefined;

  constructor(store: MessageStore, onError: (error: unknown) => void) {
    this.#store = store;
    this.#onError = onError;
  }

  /** The newest change this feed has handed out. */
  get head(): number {
    return this.#head;
  }

  get subscriberCount(): number {
    return this.#listeners.size;
  }

  async start(): Promise<void> {
    this.#head = (await this.#store.changeLogBounds()).latest;
    this.#started = true;
    this.#stopWatching = this.#store.watchChanges(() => this.wake());
  }

  async stop(): Promise<void> {
    this.#started = false;
    this.#listeners.clear();
    await this.#stopWatching?.();
  }

  /** Every change with seq > head goes to `listener`, in order, until the returned function is called. */
  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
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

  async #drain(): Promise<void> {
    try {
      do {
        this.#again = false;
        for (;;) {
          const changes = await this.#store.changesSince(this.#head, READ_BATCH);
          if (changes.length === 0) break;
          this.#head = changes[changes.length - 1]!.seq;
          for (const listener of this.#listeners) {
            try {
              listener(changes);
            } catch (error) {
              this.#onError(error);
            }
          }
          if (changes.length < READ_BATCH) break;
        }
      } while (this.#again);
    } catch (error) {
      this.#onError(error);
      // The store failed: try again shortly rather than wait for the next write.
      setTimeout(() => this.wake(), 500).unref();
    } finally {
      this.#reading = false;
    }
  }
}
