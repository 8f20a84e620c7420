/**
 * The messages themselves, as an engine keeps them: one of the concerns a
 * store is made of (see store.ts). Rows become Messages and driver errors
 * become AppErrors (503 unavailable, 507 full) before they cross. Every
 * method is one complete, atomic operation, and every write appends its
 * change to the change log in its own transaction.
 */
import type { IdempotencyClaim } from './idempotency-store.ts';
import type { ListQuery, Message, NewMessage } from './message.ts';

/** Decides, inside the write's transaction, whether the write may go on; throws an AppError if not. */
export type WriteCheck = (current: Message) => void;

export interface UpdateOutcome {
  readonly message: Message;
  /** False when the content was the same: nothing was stored, no change appended. */
  readonly changed: boolean;
}

export interface MessageStore {
  /**
   * Stores a new message and appends its change, in one transaction; with a
   * claim, also records the 201 outcome for that Idempotency-Key atomically,
   * and stores nothing (a 503) when that claim is no longer held (freed or
   * taken over meanwhile). Resolves only once the commit is durable.
   */
  create(message: NewMessage, claim?: IdempotencyClaim): Promise<Message>;

  /** The message with this lowercase id, or undefined. */
  get(id: string): Promise<Message | undefined>;

  /**
   * Runs `check` on the current message and, if it passes and the content
   * differs, stores the new content (version + 1, updatedAt = now) and appends
   * the change, all in one transaction. Undefined if there is no such message.
   */
  update(
    id: string,
    content: string,
    now: string,
    check: WriteCheck,
  ): Promise<UpdateOutcome | undefined>;

  /** Runs `check`, then deletes and appends the change, in one transaction. Returns the message as it was. */
  delete(id: string, check: WriteCheck): Promise<Message | undefined>;

  /**
   * At most `limit` messages within the query's bounds, in the query's order
   * (keyset on id), each as its JSON text: the copy stored with the row at
   * write time (messageJson's bytes), so a list is sent without building objects.
   */
  list(query: ListQuery & { readonly limit: number }): Promise<string[]>;
}
