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
/** Subjects and rooms whose last change is remembered; past this everything kept is forgotten. */
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
      this.#forget(this.#through);
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
      this.#entries.delete(subject);
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
    const kept = this.#entries.get(subject);
    if (kept !== undefined && kept.seq > mine.seq) return;
    this.#entries.delete(subject);
    if (this.#entries.size >= MAX_SUBJECTS) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(subject, { rooms: mine.rooms, seq: mine.seq });
  }

  #current(subject: string, entry: Entry): boolean {
    if (entry.seq < this.#from) return false;
    if ((this.#subjectChanged.get(subject) ?? 0) > entry.seq) return false;
    for (const { room } of entry.rooms) {
      if ((this.#roomChanged.get(room.name) ?? 0) > entry.seq) return false;
    }
    return true;
  }

  /** Drops every entry; from now on only snapshots at `from` or later are kept. */
  #forget(from: number): void {
    this.#entries.clear();
    this.#subjectChanged.clear();
    this.#roomChanged.clear();
    this.#from = from;
  }
}
