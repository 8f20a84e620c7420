/**
 * The seam between the domain and a database engine. Each engine folder under
 * `store/` implements this interface and nothing else leaves it: rows become
 * Messages and driver errors become AppErrors (503 unavailable, 507 full)
 * before they cross. Every method is one complete, atomic operation.
 */
import type { Change } from './change.ts';
import type { ListQuery, Message, NewMessage } from './message.ts';

/** Decides, inside the write's transaction, whether the write may go on; throws an AppError if not. */
export type WriteCheck = (current: Message) => void;

export interface IdempotencyClaim {
  /** The token's subject when auth is on, '' otherwise. */
  readonly scope: string;
  readonly key: string;
  /** Hash of the request body as parsed JSON (canonical form). */
  readonly requestHash: string;
  /** Identifies this claim, so a claim taken over after expiry cannot be completed by its old owner. */
  readonly token: string;
}

export type ClaimOutcome =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'replay'; readonly status: number; readonly body: string }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in-flight' };

export interface StoredResponse {
  readonly status: number;
  /** The response body as sent, JSON text. */
  readonly body: string;
}

export interface ClaimTiming {
  readonly now: Date;
  /** A pending claim older than this is abandoned (its process died) and may be taken over. */
  readonly inFlightMs: number;
  /** A completed outcome older than this is forgotten. */
  readonly ttlMs: number;
  /** A pending claim taken before this was left by a process that died (see ownedByOneProcess). */
  readonly abandonedBefore?: Date;
}

/** One page of a list, as it is sent. */
export interface MessagePage {
  /**
   * The messages' JSON texts (the copy stored with each row at write time:
   * messageJson's bytes) joined by commas, without brackets: a list is sent
   * without building an object per message.
   */
  readonly json: string;
  readonly count: number;
  /** The last message's id, lowercase (undefined when the page is empty): the next page's bound. */
  readonly lastId: string | undefined;
  /** True when more messages lie beyond this page within the query's bounds. */
  readonly more: boolean;
  /** The last change committed before this read (the same snapshot): Event-Seq. */
  readonly latestSeq: number;
}

export interface ChangeLogBounds {
  /** The newest committed change (0 when there never was one). */
  readonly latest: number;
  /** Changes at or below this were purged: resuming from before it has a gap. */
  readonly purgedThrough: number;
}

export interface MessageStore {
  /** Short engine name for logs and metrics, e.g. 'sqlite'. */
  readonly engine: string;

  /** One process at a time owns the store (a SQLite file): what it left pending, it left by dying. */
  readonly ownedByOneProcess: boolean;

  /** Applies pending migrations. Safe when several instances start at once. */
  migrate(): Promise<void>;

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
  ): Promise<{ message: Message; changed: boolean } | undefined>;

  /** Runs `check`, then deletes and appends the change, in one transaction. Returns the message as it was. */
  delete(id: string, check: WriteCheck): Promise<Message | undefined>;

  /**
   * At most `limit` messages within the query's bounds, in the query's order
   * (keyset on id), read in one snapshot together with the change log's
   * latest sequence number.
   */
  list(query: ListQuery & { readonly limit: number }): Promise<MessagePage>;

  changeLogBounds(): Promise<ChangeLogBounds>;

  /** Up to `limit` changes with seq > `after`, in seq order; every one is committed. */
  changesSince(after: number, limit: number): Promise<Change[]>;

  /**
   * Reads the key's row and lets the domain's decideClaim() rule on it, in one
   * transaction; stores this claim (pending) when the answer is 'claimed'.
   */
  claimIdempotencyKey(claim: IdempotencyClaim, timing: ClaimTiming): Promise<ClaimOutcome>;

  /** Records a non-create outcome (a 4xx) for a claim. */
  completeIdempotencyKey(claim: IdempotencyClaim, response: StoredResponse): Promise<void>;

  /** Frees a claim whose request failed with a 5xx, so a retry may run again. */
  releaseIdempotencyKey(claim: IdempotencyClaim): Promise<void>;

  /** Forgets changes and idempotency outcomes older than the given times. */
  purge(changesBefore: Date, idempotencyBefore: Date): Promise<void>;

  /**
   * Calls `wake` whenever another process may have committed changes, and
   * after every reconnect (an engine that one process owns never needs to).
   * Returns a function that stops watching.
   */
  watchChanges(wake: () => void): () => Promise<void>;

  /** Resolves when the store answers and its migrations are applied. */
  ping(): Promise<void>;

  close(): Promise<void>;
}
