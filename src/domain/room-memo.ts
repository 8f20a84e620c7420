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

  /**
   * The rooms listed as [name, version], in order: each from the memo when it
   * holds that version, the others read in one call (a state newer than
   * listed is as good) and kept. Each room is taken from the memo once,
   * before the read: while it is under way another list may replace a room
   * here, or fill the memo and start it again.
   */
  async resolve(
    listed: readonly (readonly [string, number, ...unknown[]])[],
    readMissing: (names: string[]) => Promise<readonly Room[]>,
  ): Promise<Room[]> {
    const found = listed.map(([name, version]) => this.get(name, version));
    const missing = listed.filter((_, i) => found[i] === undefined).map(([name]) => name);
    if (missing.length === 0) return found as Room[];
    const read = new Map<string, Room>();
    for (const room of await readMissing(missing)) read.set(room.name, this.keep(room));
    return listed.map(([name], i) => {
      const room = found[i] ?? read.get(name);
      if (room === undefined) throw new Error(`room ${name} was listed but not read`);
      return room;
    });
  }
}
