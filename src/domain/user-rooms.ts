/**
 * A subject's room list: its memberships and markers from the store, each
 * room's newest message and unread count from the rooms' windows
 * (room-activity.ts), which the change feed has brought up to the
 * memberships' snapshot. An unread count a window cannot tell is asked of the
 * store, for that room alone.
 */
import type { RoomActivity } from './room-activity.ts';
import type { MemberStore, ReadMarkerStore } from './room-store.ts';
import type { UserRoom } from './room.ts';

export interface UserRoomsDeps {
  readonly members: MemberStore;
  readonly readMarkers: ReadMarkerStore;
  readonly activity: RoomActivity;
  /** Resolves once the change feed has handed out every change up to `seq`. */
  readonly changesReached: (seq: number) => Promise<void>;
}

/** Most recent activity first (the later of the newest message's and the room's createdAt; ties by name), at most `limit`. */
export async function userRooms(
  deps: UserRoomsDeps,
  subject: string,
  limit: number,
): Promise<UserRoom[]> {
  const mine = await deps.members.memberRooms(subject);
  await deps.changesReached(mine.seq);
  const windows = await deps.activity.windows(mine.rooms.map((r) => r.room.name));
  const rooms: UserRoom[] = [];
  // Only a count a window cannot tell waits for the store.
  const counted: Promise<void>[] = [];
  for (const { room, role, lastRead } of mine.rooms) {
    const window = windows.get(room.name)!;
    const unread = window.unread(subject, lastRead);
    const entry = { ...room, role, lastMessage: window.newest() ?? null, lastRead, unread: 0 };
    rooms.push(entry);
    if (unread !== undefined) entry.unread = unread;
    else {
      counted.push(
        deps.readMarkers.get(room.name, subject).then((marker) => {
          entry.unread = marker.unread;
        }),
      );
    }
  }
  if (counted.length > 0) await Promise.all(counted);
  const activity = (r: UserRoom) =>
    r.lastMessage !== null && r.lastMessage.createdAt > r.createdAt
      ? r.lastMessage.createdAt
      : r.createdAt;
  rooms.sort((a, b) => {
    const x = activity(a);
    const y = activity(b);
    return x !== y ? (x < y ? 1 : -1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  return rooms.slice(0, limit);
}
