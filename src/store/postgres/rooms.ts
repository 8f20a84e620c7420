/** Rooms on PostgreSQL: each write in a transaction under the room's row lock (room-sql.ts). */
import type pg from 'pg';
import { memberAdded, roomCreated, roomUpdated } from '../../domain/room-changes.ts';
import type { Membership, Room } from '../../domain/room.ts';
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
import { appendChange } from './changes.ts';
import { LATEST_SEQ } from './list-sql.ts';
import type { PostgresSession } from './postgres-store.ts';
import { lockFacts, readFacts, ROOM_COLUMNS } from './room-sql.ts';

/**
 * A page and the latest sequence in one statement (one snapshot): one row
 * with null columns when the page is empty. Names after `$1` ('' when absent,
 * before every name), by code point (the column's collation).
 */
const LIST_ROOMS = `SELECT l.latest, p.* FROM (SELECT ${LATEST_SEQ} AS latest) l
  LEFT JOIN LATERAL (
    SELECT ${ROOM_COLUMNS} FROM rooms r
    WHERE r.name > COALESCE($1::text, '')
      AND ($2::text IS NULL OR r.visibility = $2::text)
      AND ($3::text IS NULL OR r.visibility = 'public' OR EXISTS (
        SELECT 1 FROM memberships ms WHERE ms.room = r.name AND ms.subject = $3::text))
    ORDER BY r.name LIMIT $4::integer + 1
  ) p ON true
  ORDER BY p.name`;

const ACCESS_SNAPSHOT = `SELECT ${LATEST_SEQ} AS latest,
    ARRAY(SELECT name FROM rooms WHERE visibility = 'private') AS private,
    COALESCE(m.rooms, '{}') AS rooms, COALESCE(m.subjects, '{}') AS subjects
  FROM (SELECT array_agg(room) AS rooms, array_agg(subject) AS subjects FROM memberships) m`;

/** How often a put that lost the race to create a room decides again on the room the other made. */
const CREATE_ATTEMPTS = 3;

export class PostgresRooms implements RoomStore {
  readonly #session: PostgresSession;

  constructor(session: PostgresSession) {
    this.#session = session;
  }

  async get(name: string): Promise<Room | undefined> {
    const rows = await this.#session.query<Room>(
      'get-room',
      `SELECT ${ROOM_COLUMNS} FROM rooms r WHERE r.name = $1`,
      [name],
    );
    return rows[0];
  }

  facts(name: string, subject: string | null): Promise<RoomFacts | undefined> {
    return readFacts((n, text, values) => this.#session.query(n, text, values), name, subject);
  }

  put(
    name: string,
    subject: string | null,
    creator: string | null,
    now: string,
    decide: (current: RoomFacts | undefined) => RoomValues,
  ): Promise<RoomWriteOutcome> {
    return this.#session.transaction(async (client) => {
      for (let attempt = 1; ; attempt++) {
        const facts = await lockFacts(client, name, subject);
        const values = decide(facts);
        if (facts !== undefined) return update(client, facts.room, values, now);
        const created = await create(client, name, creator, now, values);
        if (created !== undefined) return created;
        // Another writer created it since the lock found nothing (and has committed: the
        // insert waited for it). Decide again, on that room.
        if (attempt === CREATE_ATTEMPTS) throw new Error(`the room ${name} kept changing`);
      }
    });
  }

  async list(query: RoomListQuery): Promise<ObjectPage<Room>> {
    const rows = await this.#session.query<Room & { latest: string }>('list-rooms', LIST_ROOMS, [
      query.after ?? null,
      query.visibility ?? null,
      query.readableBy ?? null,
      query.limit,
    ]);
    const found = rows.filter((row) => row.name !== null).map(({ latest: _, ...room }) => room);
    return {
      items: found.slice(0, query.limit),
      more: found.length > query.limit,
      latestSeq: Number(rows[0]!.latest),
    };
  }

  async accessSnapshot(): Promise<AccessSnapshot> {
    const [row] = await this.#session.query<{
      latest: string;
      private: string[];
      rooms: string[];
      subjects: string[];
    }>('room-access-snapshot', ACCESS_SNAPSHOT, []);
    return {
      latestSeq: Number(row!.latest),
      privateRooms: row!.private,
      memberships: row!.rooms.map((room, i) => [room, row!.subjects[i]!] as const),
    };
  }
}

/** A new room (and its creator's owner membership); undefined when another writer made it first. */
async function create(
  client: pg.PoolClient,
  name: string,
  creator: string | null,
  now: string,
  values: RoomValues,
): Promise<RoomWriteOutcome | undefined> {
  const room: Room = {
    name,
    visibility: values.visibility,
    topic: values.topic,
    createdBy: creator,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const { rowCount } = await client.query({
    name: 'insert-room',
    text: `INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
      VALUES ($1, $2, $3, $4, $5, $5, 1) ON CONFLICT (name) DO NOTHING`,
    values: [name, room.visibility, room.topic, creator, now],
  });
  if (rowCount !== 1) return undefined;
  const changes = [roomCreated(room)];
  if (creator !== null) {
    const owner: Membership = { room: name, subject: creator, role: 'owner', joinedAt: now };
    await client.query({
      name: 'insert-owner',
      text: `INSERT INTO memberships (room, subject, role, joined_at) VALUES ($1, $2, 'owner', $3)`,
      values: [name, creator, now],
    });
    changes.push(memberAdded(owner));
  }
  // The change log's lock comes last, after every row lock (see migrations.ts).
  for (const change of changes) await appendChange(client, change);
  return { room, created: true, changed: true };
}

async function update(
  client: pg.PoolClient,
  before: Room,
  values: RoomValues,
  now: string,
): Promise<RoomWriteOutcome> {
  if (values.visibility === before.visibility && values.topic === before.topic) {
    return { room: before, created: false, changed: false };
  }
  const room: Room = {
    ...before,
    visibility: values.visibility,
    topic: values.topic,
    updatedAt: nextUpdatedAt(before.updatedAt, now),
    version: before.version + 1,
  };
  // Alone, this UPDATE (no key changed) would lock the row FOR NO KEY UPDATE, which writes to
  // messages (FOR KEY SHARE) do not wait for: the FOR UPDATE taken by lockFacts is what makes
  // a turn to private wait for them.
  await client.query({
    name: 'update-room',
    text: 'UPDATE rooms SET visibility = $2, topic = $3, updated_at = $4, version = $5 WHERE name = $1',
    values: [room.name, room.visibility, room.topic, room.updatedAt, room.version],
  });
  await appendChange(client, roomUpdated(room, before));
  return { room, created: false, changed: true };
}
