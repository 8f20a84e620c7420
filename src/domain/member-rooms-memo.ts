/**
 * Each subject's memberships (room, role, marker) as last read from the
 * store, kept until a change says they moved. A room list then asks the store
 * only where the change log stands (one cheap read, which is what keeps every
 * instance's answer current) instead of reading 200 memberships, markers and
 * room versions again.
 *
 * It follows the change feed. Every change that can move what a subject's
 * entry holds is in the log with a seq: member.* and read-marker.updated name
 * their subject (a join's marker is written with its member.added), and
 * room.created/updated name the room. An entry read at seq s stays good while
 * no such change with a seq above s was applied, and while this memo has seen
 * every change from s up to the seq asked for. Comparing sequence numbers,
 * not arrival order, makes the feed's timing irrelevant: a change already in
 * the entry's snapshot has a seq at or below s.
 */
import type { Change } from './change.ts';
import type { FeedFollower } from './change-feed.ts';
import type { MemberRoom, MemberRooms } from './room-store.ts';

/** Subjects whose memberships are kept; the least recently listed go first. */
const MAX_SUBJECTS = 2000;
/** Memberships kept in all (a subject in more than a tenth of this is not kept at all). */
const MAX_MEMBERSHIPS = 400_000;
/** Subjects and rooms whose last change is remembered; past this the oldest are let go. */
const MAX_CHANGED = 50_000;

interface Entry {
  readonly rooms: readonly MemberRoom[];
  readonly seq: number;
}

export class MemberRoomsMemo implements FeedFollower {
  /** The feed's head: changes after it are handed to this memo, changes up to it never are. */
  readonly #feedHead: () => number;
  readonly #entries = new Map<string, Entry>();
  /** Subject → seq of its last member.* or read-marker.updated change applied here. */
  readonly #subjectChanged = new Map<string, number>();
  /** Room → seq of its last room.created or room.updated change applied here. */
  readonly #roomChanged = new Map<string, number>();
  /** Memberships in all entries. */
  #held = 0;
  #loaded = false;
  /** This memo has applied every change after this seq (its load's head) ... */
  #from = Number.POSITIVE_INFINITY;
  /** ... up to this one. */
  #through = 0;

  constructor(feedHead: () => number) {
    this.#feedHead = feedHead;
  }

  /** Nothing to read: entries are kept as lists read them. Starts seeing changes after the feed's head. */
  async load(): Promise<void> {
    this.#from = this.#feedHead();
    this.#through = this.#from;
    this.#loaded = true;
  }

  reset(): void {
    this.#loaded = false;
    this.#forget(Number.POSITIVE_INFINITY);
  }

  apply(changes: readonly Change[]): void {
    for (const change of changes) {
      switch (change.kind) {
        case 'member.added':
        case 'member.updated':
        case 'member.removed':
        case 'read-marker.updated':
          if (change.subject !== null) this.#subjectChanged.set(change.subject, change.seq);
          break;
        case 'room.created':
        case 'room.updated':
          this.#roomChanged.set(change.room, change.seq);
          break;
        default:
          break;
      }
    }
    if (changes.length > 0) this.#through = changes[changes.length - 1]!.seq;
    if (this.#subjectChanged.size > MAX_CHANGED || this.#roomChanged.size > MAX_CHANGED) {
      this.#letGo();
    }
  }

  /**
   * The subject's memberships as of `latest` (the log's latest seq, read
   * just now), if an entry is known to hold them; undefined otherwise (not
   * kept, moved since, or this memo has not seen every change up to `latest`).
   */
  rooms(subject: string, latest: number): readonly MemberRoom[] | undefined {
    if (!this.#loaded || this.#through < latest) return undefined;
    const entry = this.#entries.get(subject);
    if (entry === undefined) return undefined;
    if (!this.#current(subject, entry)) {
      this.#drop(subject);
      return undefined;
    }
    // Map order is insertion order: taken out and put back, it is the most recently listed.
    this.#entries.delete(subject);
    this.#entries.set(subject, entry);
    return entry.rooms;
  }

  /** Keeps what the store read for the subject (a snapshot at `mine.seq`). */
  keep(subject: string, mine: MemberRooms): void {
    if (!this.#loaded || mine.seq < this.#from) return;
    if (mine.rooms.length > MAX_MEMBERSHIPS / 10) return;
    const kept = this.#entries.get(subject);
    if (kept !== undefined && kept.seq > mine.seq) return;
    this.#drop(subject);
    while (
      this.#entries.size > 0 &&
      (this.#entries.size >= MAX_SUBJECTS || this.#held + mine.rooms.length > MAX_MEMBERSHIPS)
    ) {
      this.#drop(this.#entries.keys().next().value!);
    }
    this.#entries.set(subject, { rooms: mine.rooms, seq: mine.seq });
    this.#held += mine.rooms.length;
  }

  /** Subjects kept and memberships in all (for tests). */
  get size(): { readonly subjects: number; readonly memberships: number } {
    return { subjects: this.#entries.size, memberships: this.#held };
  }

  #current(subject: string, entry: Entry): boolean {
    if (entry.seq < this.#from) return false;
    if ((this.#subjectChanged.get(subject) ?? 0) > entry.seq) return false;
    for (const { room } of entry.rooms) {
      if ((this.#roomChanged.get(room.name) ?? 0) > entry.seq) return false;
    }
    return true;
  }

  #drop(subject: string): void {
    const entry = this.#entries.get(subject);
    if (entry === undefined) return;
    this.#entries.delete(subject);
    this.#held -= entry.rooms.length;
  }

  /**
   * Too many changes remembered: those at or below the oldest kept entry's
   * seq can never drop an entry kept now, so they go, and from then on no
   * snapshot older than that is kept. If that is not enough (an entry kept
   * long ago holds them back), everything goes.
   */
  #letGo(): void {
    let oldest = this.#through;
    for (const entry of this.#entries.values()) oldest = Math.min(oldest, entry.seq);
    for (const changed of [this.#subjectChanged, this.#roomChanged]) {
      for (const [key, seq] of changed) if (seq <= oldest) changed.delete(key);
    }
    this.#from = Math.max(this.#from, oldest);
    if (this.#subjectChanged.size > MAX_CHANGED / 2 || this.#roomChanged.size > MAX_CHANGED / 2) {
      this.#forget(this.#through);
    }
  }

  /** Drops every entry; from now on only snapshots at `from` or later are kept. */
  #forget(from: number): void {
    this.#entries.clear();
    this.#held = 0;
    this.#subjectChanged.clear();
    this.#roomChanged.clear();
    this.#from = from;
  }
}
