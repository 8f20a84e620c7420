/** Memberships on PostgreSQL: each write in a transaction under the room's row lock (room-sql.ts). */
import type pg from 'pg';
import { memberAdded, memberRemoved, memberUpdated } from '../../domain/room-changes.ts';
import type { Membership, Role, Room } from '../../domain/room.ts';
import { RoomMemo } from '../../domain/room-memo.ts';
import type {
  MemberRoom,
  MemberRooms,
  MemberStore,
  MembershipFacts,
  MembershipWriteOutcome,
  ObjectPage,
} from '../../domain/room-store.ts';
import { appendChange } from './changes.ts';
import { LATEST_SEQ } from './list-sql.ts';
import type { PostgresSession } from './postgres-store.ts';
import {
  lockFacts,
  MEMBERSHIP_COLUMNS,
  newestMessageSql,
  readMembership,
  ROOM_COLUMNS,
} from './room-sql.ts';

/** A page and the latest sequence in one statement, as for rooms (rooms.ts). */
const LIST_MEMBERS = `SELECT l.latest, p.* FROM (SELECT ${LATEST_SEQ} AS latest) l
  LEFT JOIN LATERAL (
    SELECT ${MEMBERSHIP_COLUMNS} FROM memberships ms
    WHERE ms.room = $1 AND ms.subject > COALESCE($2::text, '')
    ORDER BY ms.subject LIMIT $3::integer + 1
  ) p ON true
  ORDER BY p.subject`;

/**
 * A subject's rooms (name and version: the rooms themselves come from a
 * RoomMemo) with its role and marker (the (subject, room) index), and the
 * latest seq.
 */
export const MEMBER_ROOMS = `SELECT ${LATEST_SEQ} AS latest, (
    SELECT coalesce(json_agg(json_build_array(r.name, r.version, ms.role, rm.last_read)), '[]')
    FROM memberships ms
      JOIN rooms r ON r.name = ms.room
      LEFT JOIN read_markers rm ON rm.room = ms.room AND rm.subject = ms.subject
    WHERE ms.subject = $1
  )::text AS rooms`;

/** The rooms a list named that the memo did not hold at their version. */
const ROOMS_NAMED = `SELECT ${ROOM_COLUMNS} FROM rooms r WHERE r.name = ANY($1::text[])`;

/**
 * The list as one JSON text of [name, version, role, lastRead] arrays: node-postgres
 * builds an object per row and a string per cell; for 200 rooms one text parsed once cut
 * the service's CPU per call from about 400 to 220 µs (measured in process, 2,000 calls).
 */
interface MemberRoomsRow {
  readonly latest: string;
  readonly rooms: string;
}
type MemberRoomEntry = [string, number, Role, string | null];

export class PostgresMembers implements MemberStore {
  readonly #session: PostgresSession;
  readonly #known = new RoomMemo();

  constructor(session: PostgresSession) {
    this.#session = session;
  }

  async get(room: string, subject: string): Promise<Membership | undefined> {
    const rows = await this.#session.query<Membership>(
      'get-membership',
      `SELECT ${MEMBERSHIP_COLUMNS} FROM memberships ms WHERE ms.room = $1 AND ms.subject = $2`,
      [room, subject],
    );
    return rows[0];
  }

  put(
    room: string,
    subject: string,
    actor: string | null,
    now: string,
    decide: (facts: MembershipFacts) => Role,
  ): Promise<MembershipWriteOutcome> {
    return this.#session.transaction(async (client) => {
      const facts = await membershipFacts(client, room, subject, actor);
      const role = decide(facts);
      const current = facts.current;
      if (current !== undefined) {
        if (current.role === role) return { membership: current, created: false, changed: false };
        const membership: Membership = { ...current, role };
        await client.query({
          name: 'update-membership',
          text: 'UPDATE memberships SET role = $3 WHERE room = $1 AND subject = $2',
          values: [room, subject, role],
        });
        await appendChange(client, memberUpdated(membership));
        return { membership, created: false, changed: true };
      }
      if (facts.room === undefined) throw new Error('decide let a member into a missing room');
      const membership: Membership = { room, subject, role, joinedAt: now };
      await client.query({
        name: 'insert-membership',
        text: 'INSERT INTO memberships (room, subject, role, joined_at) VALUES ($1, $2, $3, $4)',
        values: [room, subject, role, now],
      });
      // A new member has read everything so far; the marker itself appends no change.
      await client.query({
        name: 'join-read-marker',
        text: `INSERT INTO read_markers (room, subject, last_read, version)
          VALUES ($1, $2, ${newestMessageSql('$1')}, 1)
          ON CONFLICT (room, subject) DO UPDATE
            SET last_read = EXCLUDED.last_read, version = read_markers.version + 1`,
        values: [room, subject],
      });
      await appendChange(client, memberAdded(membership));
      return { membership, created: true, changed: true };
    });
  }

  remove(
    room: string,
    subject: string,
    actor: string | null,
    removedBy: string | null,
    decide: (facts: MembershipFacts) => void,
  ): Promise<Membership> {
    return this.#session.transaction(async (client) => {
      const facts = await membershipFacts(client, room, subject, actor);
      decide(facts);
      const current = facts.current;
      if (current === undefined) {
        throw new Error('decide let a missing membership be removed');
      }
      // The marker stays: a subject that leaves and comes back finds it moved to the newest.
      await client.query({
        name: 'delete-membership',
        text: 'DELETE FROM memberships WHERE room = $1 AND subject = $2',
        values: [room, subject],
      });
      await appendChange(client, memberRemoved(current, removedBy));
      return current;
    });
  }

  async list(
    room: string,
    query: { readonly after?: string; readonly limit: number },
  ): Promise<ObjectPage<Membership>> {
    const rows = await this.#session.query<Membership & { latest: string }>(
      'list-members',
      LIST_MEMBERS,
      [room, query.after ?? null, query.limit],
    );
    const found = rows
      .filter((row) => row.subject !== null)
      .map(({ latest: _, ...membership }) => membership);
    return {
      items: found.slice(0, query.limit),
      more: found.length > query.limit,
      latestSeq: Number(rows[0]!.latest),
    };
  }

  async memberRooms(subject: string): Promise<MemberRooms> {
    const [row] = await this.#session.query<MemberRoomsRow>('member-rooms', MEMBER_ROOMS, [
      subject,
    ]);
    const entries = JSON.parse(row!.rooms) as MemberRoomEntry[];
    const found = await this.#known.resolve(entries, (missing) =>
      this.#session.query<Room>('rooms-named', ROOMS_NAMED, [missing]),
    );
    const rooms: MemberRoom[] = entries.map(([, , role, lastRead], i) => ({
      room: found[i]!,
      role,
      lastRead,
    }));
    return { rooms, seq: Number(row!.latest) };
  }
}

/** The room for the actor and the target's membership, under the room's row lock. */
async function membershipFacts(
  client: pg.PoolClient,
  room: string,
  subject: string,
  actor: string | null,
): Promise<MembershipFacts> {
  const facts = await lockFacts(client, room, actor);
  const current = facts === undefined ? undefined : await readMembership(client, room, subject);
  return { room: facts, current };
}
