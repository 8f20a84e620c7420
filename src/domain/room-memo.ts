/**
 * Rooms as last read, by name and version, for the engines' room lists: a
 * list of 200 rooms then reads each room's name and version with the
 * membership and builds no room it already holds (the rooms' seven columns
 * cost a room list about a third of its store time on SQLite, profiled).
 * Rooms are never deleted and every change of one raises its version, so a
 * name and a version name one state of a room. The rooms handed out are
 * shared between lists: nobody changes them.
 */
import type { Room } from './room.ts';

/** Rooms kept; past this the memo starts again (one list reads what it misses). */
const MAX_KEPT_ROOMS = 20_000;

export class RoomMemo {
  readonly #rooms = new Map<string, Room>();

  /** The room as kept, if it is at this version. */
  get(name: string, version: number): Room | undefined {
    const room = this.#rooms.get(name);
    return room !== undefined && room.version === version ? room : undefined;
  }

  /** Keeps the room (replacing an older version) and returns it. */
  keep(room: Room): Room {
    if (this.#rooms.size >= MAX_KEPT_ROOMS && !this.#rooms.has(room.name)) this.#rooms.clear();
    this.#rooms.set(room.name, room);
    return room;
  }
}
