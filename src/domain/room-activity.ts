/**
 * The newest messages of each room, kept in memory and in step with the
 * change log, so that a subject's room list (GET /api/users/{subject}/rooms:
 * each room's newest message and unread count, for hundreds of rooms) is
 * answered without counting index entries room by room in the store.
 *
 * A room's window holds every message of the room with id >= `start` (its
 * oldest kept id), newest last: loaded from the store (the newest
 * WINDOW_SIZE, read in one snapshot with the log's latest seq), then kept by
 * the change feed's message changes after that seq. A delete only removes
 * from it and a create with a smaller id than `start` does not concern it,
 * so what it claims stays true until it is trimmed (which raises `start`).
 * An unread count is answered from it when it can be: the count reached its
 * cap, or the marker is not older than `start`, or the window holds the
 * whole room; otherwise the caller asks the store. A batch it failed to
 * apply resets it: every window is dropped, loads under way included, and
 * each is loaded again when next asked.
 */
import type { Change } from './change.ts';
import { ChangeFeed, type FeedFollower } from './change-feed.ts';
import type { ChangeLog } from './change-log.ts';
import type { RecentMessages } from './message-store.ts';
import { MAX_UNREAD, type LastMessage } from './room.ts';

/** Messages kept per room: the unread cap plus room for the subject's own messages among them. */
export const WINDOW_SIZE = 128;
/** A window that grew this far is trimmed back to WINDOW_SIZE. */
const TRIM_AT = 2 * WINDOW_SIZE;
/** Unread counts kept per window until it changes (one per subject and marker asked). */
const MAX_KEPT_COUNTS = 64;
/** Rooms kept; the least recently asked for go first. */
const MAX_WINDOWS = 2000;
/** Loads of the same windows a request tries while resets keep dropping them. */
const MAX_LOADS = 3;

/** Where the windows are loaded from and kept in step with: the store and the change feed. */
export interface ActivitySource {
  /** The newest `perRoom` messages of each room, in one snapshot with the log's latest seq. */
  recent(rooms: readonly string[], perRoom: number): Promise<RecentMessages>;
  /** The newest change the feed has handed to its listeners. */
  readonly head: number;
  /** Committed changes with seq > after, from the log (the gap between a load and the feed). */
  changesSince(after: number, limit: number): Promise<Change[]>;
}

class RoomWindow {
  /** Every message of the room with id >= start is in `entries` ('' : the whole room). */
  start: string;
  /** Ascending by id. */
  entries: LastMessage[];
  /** Changes up to this seq are in the window already (its load, or applied). */
  readonly loadedAt: number;
  /** While the gap after the load is read: the feed's changes, applied after it. */
  pending: Change[] | undefined = [];
  /** Resolves when the window holds every change the feed handed out (rejects if its load failed). */
  ready: Promise<void> = Promise.resolve();
  /** Dropped by a reset: it may have missed changes, and nothing answers from it. */
  dropped = false;
  /** Counts already answered (subject and marker -> count, -1: cannot tell), while entries stay as they are. */
  readonly #counts = new Map<string, number>();

  constructor(newestFirst: readonly LastMessage[], seq: number) {
    this.entries = [...newestFirst].reverse();
    this.start = newestFirst.length < WINDOW_SIZE ? '' : this.entries[0]!.id;
    this.loadedAt = seq;
  }

  /** A change from the feed: held back while the gap after the load is read. */
  apply(change: Change): void {
    if (this.pending !== undefined) this.pending.push(change);
    else this.applyNow(change);
  }

  applyNow(change: Change): void {
    if (change.seq <= this.loadedAt) return;
    const message = JSON.parse(change.data) as LastMessage;
    this.#counts.clear();
    if (change.kind === 'message.deleted') {
      const at = this.#indexOf(message.id);
      if (this.entries[at]?.id === message.id) this.entries.splice(at, 1);
    } else if (message.id >= this.start) {
      const at = this.#indexOf(message.id);
      if (this.entries[at]?.id === message.id) return;
      this.entries.splice(at, 0, {
        id: message.id,
        author: message.author,
        createdAt: message.createdAt,
      });
      if (this.entries.length >= TRIM_AT) {
        this.entries = this.entries.slice(-WINDOW_SIZE);
        this.start = this.entries[0]!.id;
      }
    }
  }

  /** Applies what arrived while the gap was read; from here on changes apply as they come. */
  settle(): void {
    const pending = this.pending ?? [];
    this.pending = undefined;
    for (const change of pending) this.applyNow(change);
  }

  /** The room's newest message; undefined when the window cannot tell (all it held was deleted). */
  newest(): LastMessage | null | undefined {
    const last = this.entries.at(-1);
    if (last !== undefined) return last;
    return this.start === '' ? null : undefined;
  }

  /**
   * Messages by others than `subject` after `lastRead` (null: all), up to
   * MAX_UNREAD; undefined when the window does not reach back far enough to tell.
   */
  unread(subject: string, lastRead: string | null): number | undefined {
    // A list asked again before its rooms changed (the same subject polling, others in the
    // same position) is answered without walking the window again.
    const key = `${subject}\u0000${lastRead ?? ''}`;
    let count = this.#counts.get(key);
    if (count === undefined) {
      count = this.#count(subject, lastRead ?? '');
      if (this.#counts.size >= MAX_KEPT_COUNTS) this.#counts.clear();
      this.#counts.set(key, count);
    }
    return count < 0 ? undefined : count;
  }

  #count(subject: string, after: string): number {
    let count = 0;
    for (let i = this.entries.length - 1; i >= 0; i -= 1) {
      const entry = this.entries[i]!;
      if (entry.id <= after) return count;
      if (entry.author !== subject && ++count === MAX_UNREAD) return count;
    }
    // Every kept message is after the marker: the count is whole only if nothing older is missing.
    return this.start === '' || after >= this.start ? count : -1;
  }

  /** Position of `id` in entries, or where it would go. */
  #indexOf(id: string): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.entries[mid]!.id < id) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

const MESSAGE_KINDS = new Set(['message.created', 'message.deleted']);

export class RoomActivity implements FeedFollower {
  readonly #source: ActivitySource;
  /** Map order is use order: the first entry is the least recently asked for. */
  readonly #windows = new Map<string, RoomWindow>();

  constructor(source: ActivitySource) {
    this.#source = source;
  }

  /**
   * Nothing to read (windows are loaded as room lists ask for them), but
   * windows a list built while this was unloaded (reset, its load not yet
   * run) were given no batch meanwhile: they go too.
   */
  async load(): Promise<void> {
    this.reset();
  }

  /** Forgets every window, loads under way included: a batch may have reached some of them only in part. */
  reset(): void {
    for (const window of this.#windows.values()) window.dropped = true;
    this.#windows.clear();
  }

  /** Every batch of the change feed, as it is handed out (a follower of the feed). */
  apply(changes: readonly Change[]): void {
    for (const change of changes) {
      if (!MESSAGE_KINDS.has(change.kind)) continue;
      this.#windows.get(change.room)?.apply(change);
    }
  }

  /**
   * Each room's newest message (null: none): from its window when one is
   * kept, else read from the store (one message per room, no window made).
   */
  async newest(rooms: readonly string[]): Promise<Map<string, LastMessage | null>> {
    const out = new Map<string, LastMessage | null>();
    const unknown: string[] = [];
    for (const room of rooms) {
      const window = this.#windows.get(room);
      const newest = window?.pending === undefined ? window?.newest() : undefined;
      if (newest === undefined) unknown.push(room);
      else out.set(room, newest);
    }
    if (unknown.length > 0) {
      const read = await this.#source.recent(unknown, 1);
      for (const room of unknown) out.set(room, read.rooms.get(room)?.[0] ?? null);
    }
    return out;
  }

  /**
   * The windows of these rooms, each holding every change the feed handed
   * out so far: kept ones as they are, the others loaded in one read.
   */
  async windows(rooms: readonly string[]): Promise<Map<string, RoomWindow>> {
    const out = new Map<string, RoomWindow>();
    const missing: string[] = [];
    for (const room of rooms) {
      const window = this.#windows.get(room);
      if (window === undefined) missing.push(room);
      else {
        // Asked for again: now the most recently used.
        this.#windows.delete(room);
        this.#windows.set(room, window);
        out.set(room, window);
      }
    }
    const loading = missing.length > 0 ? this.#load(missing) : undefined;
    // Windows another request is loading are ready when their load is.
    const loads = [...out.values()].filter((w) => w.pending !== undefined).map((w) => w.ready);
    if (loads.length > 0) await Promise.all(loads);
    for (const [room, window] of (await loading) ?? []) out.set(room, window);
    // A window whose messages were all deleted cannot tell the newest (loaded again once), and
    // one a reset dropped while it was awaited may have missed changes (loaded again until one
    // load is not reset, a few times at most).
    for (let round = 0; ; round += 1) {
      const again = [...out]
        .filter(([, w]) => w.dropped || (round === 0 && w.newest() === undefined))
        .map(([room]) => room);
      if (again.length === 0) return out;
      if (round === MAX_LOADS)
        throw new Error('room windows were reset during each of their loads');
      for (const [room, window] of await this.#load(again)) out.set(room, window);
    }
  }

  async #load(rooms: readonly string[]): Promise<Map<string, RoomWindow>> {
    const recent = await this.#source.recent(rooms, WINDOW_SIZE);
    let settled!: (error?: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => {
      settled = (error) => (error === undefined ? resolve() : reject(error));
    });
    // Whoever awaits it sees the failure; nobody awaiting is not an unhandled rejection.
    ready.catch(() => undefined);
    const loaded = new Map<string, RoomWindow>();
    for (const room of rooms) {
      const window = new RoomWindow(recent.rooms.get(room) ?? [], recent.seq);
      window.ready = ready;
      loaded.set(room, window);
      this.#windows.delete(room);
      this.#windows.set(room, window);
    }
    while (this.#windows.size > MAX_WINDOWS) {
      this.#windows.delete(this.#windows.keys().next().value!);
    }
    // From here the feed's batches reach these windows (held back until the gap is read); the
    // changes it handed out before, after the load's snapshot, are read from the log.
    const through = this.#source.head;
    try {
      for (let after = recent.seq; after < through;) {
        const changes = await this.#source.changesSince(after, 1000);
        if (changes.length === 0) break;
        for (const change of changes) {
          if (change.seq > through) break;
          if (MESSAGE_KINDS.has(change.kind)) loaded.get(change.room)?.applyNow(change);
        }
        after = changes.at(-1)!.seq;
      }
    } catch (error) {
      for (const [room, window] of loaded) {
        if (this.#windows.get(room) === window) this.#windows.delete(room);
      }
      settled(error);
      throw error;
    }
    for (const window of loaded.values()) window.settle();
    settled();
    return loaded;
  }
}

/**
 * The change feed over `log` and the room activity that follows it, built as
 * a pair: the activity reads the gap after each load through the feed, and
 * the feed hands it every batch, after the `others` it follows first.
 */
export function feedWithActivity(
  log: ChangeLog,
  recent: ActivitySource['recent'],
  onError: (error: unknown) => void,
  others: readonly FeedFollower[] = [],
): { readonly feed: ChangeFeed; readonly activity: RoomActivity } {
  const activity: RoomActivity = new RoomActivity({
    recent,
    get head(): number {
      return feed.head;
    },
    changesSince: (after, limit) => feed.changesSince(after, limit),
  });
  const feed: ChangeFeed = new ChangeFeed(log, onError, [...others, activity]);
  return { feed, activity };
}
