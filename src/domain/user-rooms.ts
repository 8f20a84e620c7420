/**
 * A subject's room list: its memberships and markers (from the memo when it
 * holds them as of the log's latest seq, otherwise from the store), each
 * room's newest message and unread count from the rooms' windows
 * (room-activity.ts), which the change feed has brought up to the
 * memberships' snapshot. An unread count a window cannot tell is asked of the
 * store, for that room alone.
 */
import type { MemberRoomsMemo } from './member-rooms-memo.ts';
import type { RoomActivity } from './room-activity.ts';
import type { MemberRoom, MemberStore, ReadMarkerStore } from './room-store.ts';
import type { LastMessage, Room, UserRoom } from './room.ts';

export interface UserRoomsDeps {
  readonly members: MemberStore;
  readonly readMarkers: ReadMarkerStore;
  readonly activity: RoomActivity;
  readonly memberships: MemberRoomsMemo;
  /** The change log's latest seq, read from the store now. */
  readonly latestSeq: () => Promise<number>;
  /** Resolves once the change feed has handed out every change up to `seq` (true), or after a short while if it cannot (false). */
  readonly changesReached: (seq: number) => Promise<boolean>;
}

/** Most recent activity first (the later of the newest message's and the room's createdAt; ties by name), at most `limit`. */
export async function userRooms(
  deps: UserRoomsDeps,
  subject: string,
  limit: number,
): Promise<UserRoom[]> {
  let chosen = await memberRooms(deps, subject);
  if (chosen.length > limit) {
    // Only the rooms that make the cut need a window (and an unread count): the others are
    // ranked by their newest message alone, so a subject in ten thousand rooms does not load
    // ten thousand windows (nor evict the ones it just loaded).
    const newest = await deps.activity.newest(chosen.map((r) => r.room.name));
    chosen = byActivity(
      [...chosen],
      (r) => r.room,
      (r) => newest.get(r.room.name) ?? null,
    );
    chosen = chosen.slice(0, limit);
  }
  const windows = await deps.activity.windows(chosen.map((r) => r.room.name));
  const rooms: UserRoom[] = [];
  const uncounted: UserRoom[] = [];
  for (const { room, role, lastRead } of chosen) {
    const window = windows.get(room.name)!;
    const unread = window.unread(subject, lastRead);
    // Written out, not spread: a spread of the room cost most of a list's own time (profiled).
    const entry: UserRoom = {
      name: room.name,
      visibility: room.visibility,
      topic: room.topic,
      createdBy: room.createdBy,
      createdAt: room.createdAt,
      updatedAt: room.updatedAt,
      version: room.version,
      role,
      lastMessage: window.newest() ?? null,
      lastRead,
      unread: 0,
    };
    rooms.push(entry);
    if (unread === undefined) uncounted.push(entry);
    else entry.unread = unread;
  }
  // A count a window cannot tell is the store's: one room at a time, so a list never holds
  // more than one of the store's connections.
  for (const entry of uncounted) {
    entry.unread = (await deps.readMarkers.get(entry.name, subject)).unread;
  }
  return byActivity(
    rooms,
    (r) => r,
    (r) => r.lastMessage,
  );
}

/** The subject's memberships as of now: kept ones when no change moved them, else the store's. */
async function memberRooms(deps: UserRoomsDeps, subject: string): Promise<readonly MemberRoom[]> {
  const latest = await deps.latestSeq();
  const reached = await deps.changesReached(latest);
  const kept = deps.memberships.rooms(subject, latest);
  if (kept !== undefined) return kept;
  const mine = await deps.members.memberRooms(subject);
  // A feed that could not reach `latest` in time will not reach the later seq either: one wait.
  if (reached) await deps.changesReached(mine.seq);
  deps.memberships.keep(subject, mine);
  return mine.rooms;
}

/** Sorts in place, most recent activity first, ties by name. */
function byActivity<T>(
  items: T[],
  roomOf: (item: T) => Room,
  newestOf: (item: T) => LastMessage | null,
): T[] {
  const activity = new Map<T, string>();
  for (const item of items) {
    const room = roomOf(item);
    const newest = newestOf(item);
    activity.set(
      item,
      newest !== null && newest.createdAt > room.createdAt ? newest.createdAt : room.createdAt,
    );
  }
  return items.sort((a, b) => {
    const x = activity.get(a)!;
    const y = activity.get(b)!;
    if (x !== y) return x < y ? 1 : -1;
    const m = roomOf(a).name;
    const n = roomOf(b).name;
    return m < n ? -1 : m > n ? 1 : 0;
  });
}
