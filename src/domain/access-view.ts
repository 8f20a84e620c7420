/**
 * What this instance knows of who may read which room, kept in step with the
 * change log: the change feed loads it once and applies every batch to it
 * before any stream sees the batch, so a stream judges each change with
 * every membership and visibility change up to it already applied (a member
 * removed at seq n receives nothing of the room after n, on every instance).
 * It holds the private rooms' names and every membership. Reset (a batch it
 * failed to apply), it holds nothing and calls every room private until it is
 * loaded again: until a load succeeds (ChangeFeed.settling), streams that
 * judge by it read the changes from the log and wait, so nothing is judged by it.
 */
import type { Change } from './change.ts';
import type { AccessLookup } from './room-access.ts';
import type { Visibility } from './room.ts';
import type { RoomStore } from './room-store.ts';

export class AccessView implements AccessLookup {
  readonly #rooms: Pick<RoomStore, 'accessSnapshot'>;
  readonly #private = new Set<string>();
  /** room → its members' subjects */
  readonly #members = new Map<string, Set<string>>();
  #loaded = false;
  /** The log's latest change in the loaded snapshot: changes up to it are in it already. */
  #asOf = 0;

  constructor(rooms: Pick<RoomStore, 'accessSnapshot'>) {
    this.#rooms = rooms;
  }

  /**
   * Reads the store's snapshot. The feed loads it after it took its own
   * starting point, so the snapshot may already hold changes the feed will
   * hand out again: those are skipped by sequence, since an older change
   * applied over a newer snapshot would undo what came after it (a member
   * added again after a removal the snapshot holds).
   */
  async load(): Promise<void> {
    const snapshot = await this.#rooms.accessSnapshot();
    this.#private.clear();
    this.#members.clear();
    for (const name of snapshot.privateRooms) this.#private.add(name);
    for (const [room, subject] of snapshot.memberships) this.#add(room, subject);
    this.#asOf = snapshot.latestSeq;
    this.#loaded = true;
  }

  reset(): void {
    this.#loaded = false;
    this.#private.clear();
    this.#members.clear();
  }

  visibility(room: string): Visibility {
    return !this.#loaded || this.#private.has(room) ? 'private' : 'public';
  }

  isMember(room: string, subject: string): boolean {
    return this.#members.get(room)?.has(subject) === true;
  }

  apply(changes: readonly Change[]): void {
    for (const change of changes) {
      if (change.seq <= this.#asOf) continue;
      switch (change.kind) {
        case 'room.created':
        case 'room.updated':
          if ((JSON.parse(change.data) as { visibility: Visibility }).visibility === 'private') {
            this.#private.add(change.room);
          } else {
            this.#private.delete(change.room);
          }
          break;
        case 'member.added':
        case 'member.updated':
          if (change.subject !== null) this.#add(change.room, change.subject);
          break;
        case 'member.removed':
          if (change.subject !== null) this.#members.get(change.room)?.delete(change.subject);
          break;
        default:
          break;
      }
    }
  }

  #add(room: string, subject: string): void {
    let members = this.#members.get(room);
    if (members === undefined) this.#members.set(room, (members = new Set()));
    members.add(subject);
  }
}
