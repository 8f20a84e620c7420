/** Read markers on SQLite: a row per (room, subject) once set; unread counted from the (room, id) index. */
import type { Statement } from 'better-sqlite3';
import { markerUpdated } from '../../domain/room-changes.ts';
import { MAX_UNREAD, type ReadMarker } from '../../domain/room.ts';
import type { MarkerFacts, MarkerWriteOutcome, ReadMarkerStore } from '../../domain/room-store.ts';
import type { SqliteChangeLog } from './changes.ts';
import { toStoreError } from './errors.ts';
import type { SqliteRooms } from './rooms.ts';
import type { SqliteSession } from './sqlite-store.ts';

/**
 * The unread count of `subject` in `room` after `lastRead` (every message when
 * null), as SQL expressions: others' messages only, and no more than
 * MAX_UNREAD of them are read (the room index alone: it holds the author).
 */
export function unreadSql(room: string, lastRead: string, subject: string): string {
  return `(SELECT count(*) FROM (SELECT 1 FROM messages u
    WHERE u.room = ${room} AND u.id > coalesce(${lastRead}, '') AND u.author <> ${subject}
    LIMIT ${MAX_UNREAD}))`;
}

export class SqliteReadMarkers implements ReadMarkerStore {
  readonly #session: SqliteSession;
  readonly #changes: SqliteChangeLog;
  readonly #rooms: SqliteRooms;
  readonly #get: Statement;
  readonly #unread: Statement;
  readonly #inRoom: Statement;
  readonly #upsert: Statement;
  readonly #startAtNewest: Statement;

  constructor(session: SqliteSession, changes: SqliteChangeLog, rooms: SqliteRooms) {
    this.#session = session;
    this.#changes = changes;
    this.#rooms = rooms;
    const db = session.db;
    this.#get = db
      .prepare('SELECT last_read, version FROM read_markers WHERE room = ? AND subject = ?')
      .raw();
    this.#unread = db.prepare(`SELECT ${unreadSql('@room', '@lastRead', '@subject')}`).pluck();
    this.#inRoom = db.prepare('SELECT 1 FROM messages WHERE id = ? AND room = ?').pluck();
    this.#upsert = db
      .prepare(
        `INSERT INTO read_markers (room, subject, last_read, version) VALUES (?, ?, ?, 1)
       ON CONFLICT (room, subject) DO UPDATE SET last_read = excluded.last_read, version = version + 1
       RETURNING version`,
      )
      .pluck();
    this.#startAtNewest = db.prepare(
      `INSERT INTO read_markers (room, subject, last_read, version)
       VALUES (@room, @subject, (SELECT id FROM messages WHERE room = @room ORDER BY id DESC LIMIT 1), 1)
       ON CONFLICT (room, subject) DO UPDATE SET last_read = excluded.last_read, version = version + 1`,
    );
  }

  async get(room: string, subject: string): Promise<ReadMarker> {
    try {
      this.#session.snapshot();
      return this.#read(room, subject);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  put(
    room: string,
    subject: string,
    lastRead: string,
    decide: (facts: MarkerFacts) => boolean,
    reader: string | null = null,
  ): Promise<MarkerWriteOutcome> {
    return this.#session.write(() => {
      const current = this.#read(room, subject);
      const messageInRoom = this.#inRoom.get(lastRead, room) !== undefined;
      const facts: MarkerFacts =
        reader === null
          ? { current, messageInRoom }
          : { current, messageInRoom, access: this.#rooms.readAccess(room, reader) };
      if (!decide(facts) || lastRead === current.lastRead) {
        return { marker: current, changed: false };
      }
      const version = this.#upsert.get(room, subject, lastRead) as number;
      const marker = { room, subject, lastRead, version };
      this.#changes.add(markerUpdated(marker));
      return {
        marker: { ...marker, unread: this.#countUnread(room, lastRead, subject) },
        changed: true,
      };
    });
  }

  /** Inside a new membership's write: the marker starts at the room's newest message (no change appended). */
  startAtNewest(room: string, subject: string): void {
    this.#startAtNewest.run({ room, subject });
  }

  #read(room: string, subject: string): ReadMarker {
    const row = this.#get.get(room, subject) as [string | null, number] | undefined;
    const lastRead = row?.[0] ?? null;
    return {
      room,
      subject,
      lastRead,
      unread: this.#countUnread(room, lastRead, subject),
      version: row?.[1] ?? 0,
    };
  }

  #countUnread(room: string, lastRead: string | null, subject: string): number {
    return this.#unread.get({ room, lastRead, subject }) as number;
  }
}
