/**
 * One engine's store: its concerns, each a seam of its own, and its
 * lifecycle. `store/create-store.ts` returns one; the composition root hands
 * each service the concern it needs. Each engine folder under `store/` has
 * one file per concern, and nothing leaves it but these interfaces.
 */
import type { ChangeLog } from './change-log.ts';
import type { IdempotencyStore } from './idempotency-store.ts';
import type { MessageStore } from './message-store.ts';
import type { ReactionStore } from './reaction-store.ts';
import type { MemberStore, ReadMarkerStore, RoomStore } from './room-store.ts';

export interface StoreLifecycle {
  /** Short engine name for logs and metrics, e.g. 'sqlite'. */
  readonly engine: string;

  /** Applies pending migrations. Safe when several instances start at once. */
  migrate(): Promise<void>;

  /** Resolves when the store answers and its migrations are applied; a 503 otherwise. */
  ping(): Promise<void>;

  /** Stops watching, waits for durable writes under way, and closes the connections; twice is a no-op. */
  close(): Promise<void>;
}

/** The concerns are usable once `migrate()` has resolved. */
export interface Store extends StoreLifecycle {
  readonly messages: MessageStore;
  readonly changes: ChangeLog;
  readonly idempotency: IdempotencyStore;
  readonly rooms: RoomStore;
  readonly members: MemberStore;
  readonly readMarkers: ReadMarkerStore;
  readonly reactions: ReactionStore;
}
