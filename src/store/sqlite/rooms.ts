/** Rooms on SQLite: one row per room, every write through the group commit with its changes. */
import type { Statement } from 'better-sqlite3';
import { memberAdded, roomCreated, roomUpdated } from '../../domain/room-changes.ts';
import type { AccessFacts } from '../../domain/room-access.ts';
import type { Role, Room, Visibility } from '../../domain/room.ts';
import { nextUpdatedAt } from '../../domain/write-rules.ts';
import type {
  AccessSnapshot,
  ObjectPage,
  RoomFacts,
  RoomListQuery,
  RoomStore,
  RoomValues,
  RoomWriteOutcome,
} from '../../domain/room-store.ts';
import type { SqliteChangeLog } from './changes.ts';
import { toStoreError } from './errors.ts';
import type { SqliteSession } from './sqlite-store.ts';

export const ROOM_COLUMNS = 'name, visibility, topic, created_by, created_at, updated_at, version';

export type RoomRow = [string, Visibility, string, string | null, string, string, number];

export function roomOf(row: RoomRow): Room {
  return {
    name: row[0],
    visibility: row[1],
    topic: row[2],
    createdBy: row[3],
    createdAt: row[4],
    updatedAt: row[5],
    version: row[6],
  };
}

export class SqliteRooms implements RoomStore {
  readonly #session: SqliteSession;
  readonly #changes: SqliteChangeLog;
  readonly #get: Statement;
  readonly #role: Statement;
  readonly #access: Statement;
  readonly #owners: Statement;
  readonly #exists: Statement;
  readonly #insert: Statement;
  readonly #update: Statement;
  readonly #insertMember: Statement;
  readonly #privateRooms: Statement;
  readonly #allMemberships: Statement;
  /** One prepared statement per list shape. */
  readonly #lists = new Map<string, Statement>();

  constructor(session: SqliteSession, changes: SqliteChangeLog) {
    this.#session = session;
    this.#changes = changes;
    const db = session.db;
    this.#get = db.prepare(`SELECT ${ROOM_COLUMNS} FROM rooms WHERE name = ?`).raw();
    this.#role = db.prepare('SELECT role FROM memberships WHERE room = ? AND subject = ?').pluck();
    this.#access = db
      .prepare(
        `SELECT r.visibility,
           (SELECT m.role FROM memberships m WHERE m.room = r.name AND m.subject = ?)
         FROM rooms r WHERE r.name = ?`,
      )
      .raw();
    this.#owners = db
      .prepare("SELECT count(*) FROM memberships WHERE room = ? AND role = 'owner'")
      .pluck();
    this.#exists = db.prepare('SELECT 1 FROM rooms WHERE name = ?').pluck();
    this.#insert = db.prepare(
      `INSERT INTO rooms (${ROOM_COLUMNS}) VALUES (@name, @visibility, @topic, @createdBy, @createdAt, @updatedAt, @version)`,
    );
    this.#update = db.prepare(
      'UPDATE rooms SET visibility = @visibility, topic = @topic, updated_at = @updatedAt, version = @version WHERE name = @name',
    );
    this.#insertMember = db.prepare(
      'INSERT INTO memberships (room, subject, role, joined_at) VALUES (?, ?, ?, ?)',
    );
    this.#privateRooms = db.prepare("SELECT name FROM rooms WHERE visibility = 'private'").pluck();
    this.#allMemberships = db.prepare('SELECT room, subject FROM memberships').raw();
  }

  async get(name: string): Promise<Room | undefined> {
    try {
      this.#session.snapshot();
      return this.read(name);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async facts(name: string, subject: string | null): Promise<RoomFacts | undefined> {
    try {
      this.#session.snapshot();
      return this.readFacts(name, subject);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** The facts as the current transaction sees them (membership writes read them inside theirs). */
  readFacts(name: string, subject: string | null): RoomFacts | undefined {
    const room = this.read(name);
    if (room === undefined) return undefined;
    const role =
      subject === null ? null : ((this.#role.get(name, subject) as Role | undefined) ?? null);
    return { room, role, owners: this.#owners.get(name) as number };
  }

  /**
   * `subject`'s access facts of the room as the current write transaction
   * sees them (undefined: no such room): the writes of messages, reactions and
   * markers judge the access rule again on them, after every write before theirs.
   */
  readAccess(name: string, subject: string): AccessFacts | undefined {
    const row = this.#access.get(subject, name) as [Visibility, Role | null] | undefined;
    return row === undefined ? undefined : { visibility: row[0], role: row[1] };
  }

  put(
    name: string,
    subject: string | null,
    creator: string | null,
    now: string,
    decide: (current: RoomFacts | undefined) => RoomValues,
  ): Promise<RoomWriteOutcome> {
    return this.#session.write(() => {
      const current = this.readFacts(name, subject);
      const values = decide(current);
      if (current === undefined) {
        return { room: this.#create(name, values, creator, now), created: true, changed: true };
      }
      const before = current.room;
      if (values.visibility === before.visibility && values.topic === before.topic) {
        return { room: before, created: false, changed: false };
      }
      const room: Room = {
        ...before,
        ...values,
        updatedAt: nextUpdatedAt(before.updatedAt, now),
        version: before.version + 1,
      };
      this.#update.run(room);
      this.#changes.add(roomUpdated(room, before));
      return { room, created: false, changed: true };
    });
  }

  /**
   * Inside a message's create: a name that is not a room yet becomes a public
   * room of the author's, who is its owner (room.created, member.added).
   */
  ensureForMessage(name: string, author: string, at: string): void {
    if (this.#exists.get(name) !== undefined) return;
    this.#create(name, { visibility: 'public', topic: '' }, author, at);
  }

  #create(name: string, values: RoomValues, creator: string | null, now: string): Room {
    const room: Room = {
      name,
      visibility: values.visibility,
      topic: values.topic,
      createdBy: creator,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    this.#insert.run(room);
    this.#changes.add(roomCreated(room));
    if (creator !== null) {
      this.#insertMember.run(name, creator, 'owner', now);
      this.#changes.add(
        memberAdded({ room: name, subject: creator, role: 'owner', joinedAt: now }),
      );
    }
    return room;
  }

  async list(query: RoomListQuery): Promise<ObjectPage<Room>> {
    const statement = this.#listStatement(query);
    const values: unknown[] = [];
    if (query.after !== undefined) values.push(query.after);
    if (query.visibility !== undefined) values.push(query.visibility);
    if (query.readableBy !== undefined) values.push(query.readableBy);
    values.push(query.limit + 1);
    try {
      this.#session.snapshot();
      const latestSeq = this.#changes.readBounds().latest;
      const rows = statement.all(...values) as RoomRow[];
      const more = rows.length > query.limit;
      if (more) rows.length = query.limit;
      return { items: rows.map(roomOf), more, latestSeq };
    } catch (error) {
      throw toStoreError(error);
    }
  }

  #listStatement(query: RoomListQuery): Statement {
    const key = `${query.after !== undefined ? 'a' : ''}${query.visibility !== undefined ? 'v' : ''}${query.readableBy !== undefined ? 'p' : ''}`;
    let statement = this.#lists.get(key);
    if (statement === undefined) {
      const where: string[] = [];
      if (query.after !== undefined) where.push('name > ?');
      if (query.visibility !== undefined) where.push('visibility = ?');
      if (query.readableBy !== undefined) {
        where.push(
          "(visibility = 'public' OR EXISTS (SELECT 1 FROM memberships m WHERE m.room = rooms.name AND m.subject = ?))",
        );
      }
      const filter = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
      statement = this.#session.db
        .prepare(`SELECT ${ROOM_COLUMNS} FROM rooms${filter} ORDER BY name LIMIT ?`)
        .raw();
      this.#lists.set(key, statement);
    }
    return statement;
  }

  async accessSnapshot(): Promise<AccessSnapshot> {
    try {
      this.#session.snapshot();
      return {
        latestSeq: this.#changes.readBounds().latest,
        privateRooms: this.#privateRooms.all() as string[],
        memberships: this.#allMemberships.all() as [string, string][],
      };
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** The room as stored, within a read or write already begun (no snapshot of its own). */
  read(name: string): Room | undefined {
    const row = this.#get.get(name) as RoomRow | undefined;
    return row === undefined ? undefined : roomOf(row);
  }
}
