/**
 * The change log as an engine keeps it: every committed write's change, in
 * one sequence (the writes append to it in their own transactions, see
 * message-store.ts). The change feed reads it; nothing else writes it.
 */
import type { Change } from './change.ts';

export interface ChangeLogBounds {
  /** The newest committed change (0 when there never was one). */
  readonly latest: number;
  /** Changes at or below this were purged: resuming from before it has a gap. */
  readonly purgedThrough: number;
}

export interface ChangeLog {
  /** Where the log stands now; `latest` never counts a change a reader could not yet see. */
  bounds(): Promise<ChangeLogBounds>;

  /**
   * Up to `limit` changes with seq > `after`, in seq order; every one is
   * committed, and once a reader has seen seq n no change at or below n can
   * still appear.
   */
  since(after: number, limit: number): Promise<Change[]>;

  /**
   * Forgets changes made before `before`, except the newest one (so the
   * latest sequence survives), and raises `purgedThrough` to match.
   */
  purge(before: Date): Promise<void>;

  /**
   * Calls `wake` whenever another process may have committed changes, and
   * after every reconnect (an engine that one process owns never needs to).
   * Returns a function that stops watching.
   */
  watch(wake: () => void): () => Promise<void>;
}
