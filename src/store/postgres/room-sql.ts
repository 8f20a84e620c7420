/**
 * What the room, membership and marker stores on PostgreSQL share: the rows
 * as domain objects, the room's facts under its row lock, and the unread count.
 */
import type pg from 'pg';
import type { AccessFacts } from '../../domain/room-access.ts';
import { MAX_UNREAD, type Membership, type Room } from '../../domain/room.ts';
import type { RoomFacts } from '../../domain/room-store.ts';

/** The smallest id: an open lower bound of a room's range of the (room, id) index. */
export const MIN_ID = '00000000-0000-0000-0000-000000000000';

/** A timestamp as messages render theirs: ISO 8601, UTC, milliseconds. */
export function iso(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The room row `r` as the domain type. */
export const ROOM_COLUMNS = `r.name, r.visibility, r.topic, r.created_by AS "createdBy",
  ${iso('r.created_at')} AS "createdAt", ${iso('r.updated_at')} AS "updatedAt", r.version`;

/** The membership row `ms` as the domain type. */
export const MEMBERSHIP_COLUMNS = `ms.room, ms.subject, ms.role, ${iso('ms.joined_at')} AS "joinedAt"`;

/**
 * The room's messages after `lastRead` (all when null) written by others,
 * counted up to MAX_UNREAD: a range of the (room, id) index, newest first,
 * that stops at the limit. The ORDER BY is what keeps it a walk: without it a
 * generic plan reads the whole range through a bitmap first (measured: 0.7 ms
 * a room for a room of 1,000 messages).
 */
export function unreadSql(room: string, subject: string, lastRead: string): string {
  return `(SELECT count(*)::integer FROM (SELECT 1 FROM messages m
    WHERE m.room = ${room} AND m.id > COALESCE(${lastRead}, '${MIN_ID}'::uuid)
      AND m.author <> ${subject}
    ORDER BY m.room DESC, m.id DESC LIMIT ${MAX_UNREAD}) u)`;
}

/** The id of the room's newest message (null when it has none): the (room, id) index, backwards. */
export function newestMessageSql(room: string): string {
  return `(SELECT m.id FROM messages m WHERE m.room = ${room}
    ORDER BY m.room DESC, m.id DESC LIMIT 1)`;
}

type FactsRow = Room & { role: RoomFacts['role']; owners: number };

const FACTS_SQL = `SELECT ${ROOM_COLUMNS},
    (SELECT ms.role FROM memberships ms WHERE ms.room = r.name AND ms.subject = $2) AS role,
    (SELECT count(*)::integer FROM memberships ms
      WHERE ms.room = r.name AND ms.role = 'owner') AS owners
  FROM rooms r WHERE r.name = $1`;

function toFacts(row: FactsRow | undefined): RoomFacts | undefined {
  if (row === undefined) return undefined;
  const { role, owners, ...room } = row;
  return { room, role, owners };
}

/** The room's facts for `subject`, in one statement (one snapshot), without a lock. */
export async function readFacts(
  query: (name: string, text: string, values: unknown[]) => Promise<FactsRow[]>,
  name: string,
  subject: string | null,
): Promise<RoomFacts | undefined> {
  return toFacts((await query('room-facts', FACTS_SQL, [name, subject]))[0]);
}

/**
 * The modes a room's row is locked in until the transaction ends, weakest
 * first: writes to its messages and reactions (KEY SHARE) run side by side
 * and beside its read markers (NO KEY UPDATE, which take turns), and writes
 * to the room and its memberships (UPDATE) wait for all of them and they for
 * it. Whatever a write then decides on is read in a statement of its own,
 * after the lock is granted: read in the locking statement it would be as of
 * that statement's start (READ COMMITTED: one snapshot per statement), before
 * the wait, so two owners leaving at once could each count the other and the
 * room be left without one.
 */
const LOCK_MODES = {
  'key share': 'FOR KEY SHARE',
  'no key update': 'FOR NO KEY UPDATE',
  update: 'FOR UPDATE',
} as const;

/** Locks the room's row in `mode` (see LOCK_MODES); false when there is no such room. */
export async function lockRoom(
  client: pg.PoolClient,
  name: string,
  mode: keyof typeof LOCK_MODES,
): Promise<boolean> {
  const locked = await client.query({
    name: `lock-room-${mode}`,
    text: `SELECT 1 FROM rooms WHERE name = $1 ${LOCK_MODES[mode]}`,
    values: [name],
  });
  return locked.rowCount !== 0;
}

/**
 * The room's facts for `subject`, under the room's row lock FOR UPDATE: every
 * write to a room and its memberships takes it first, so they run one at a
 * time per room, and each decides on facts that stay true until it commits.
 */
export async function lockFacts(
  client: pg.PoolClient,
  name: string,
  subject: string | null,
): Promise<RoomFacts | undefined> {
  if (!(await lockRoom(client, name, 'update'))) return undefined;
  const { rows } = await client.query<FactsRow>({
    name: 'room-facts',
    text: FACTS_SQL,
    values: [name, subject],
  });
  return toFacts(rows[0]);
}

/** The membership of `subject` in `room` (read under the room's lock by the writes). */
export async function readMembership(
  client: pg.PoolClient,
  room: string,
  subject: string,
): Promise<Membership | undefined> {
  const { rows } = await client.query<Membership>({
    name: 'get-membership',
    text: `SELECT ${MEMBERSHIP_COLUMNS} FROM memberships ms WHERE ms.room = $1 AND ms.subject = $2`,
    values: [room, subject],
  });
  return rows[0];
}

/**
 * `subject`'s access facts of the room, read in a statement of its own so
 * that its snapshot (READ COMMITTED: one per statement) holds every write
 * committed before the room's lock was granted: read in the locking
 * statement, the membership would be as of before the wait. Undefined: no
 * such room.
 */
export async function readAccess(
  client: pg.PoolClient,
  room: string,
  subject: string,
): Promise<AccessFacts | undefined> {
  const { rows } = await client.query<AccessFacts>({
    name: 'room-access-facts',
    text: `SELECT r.visibility,
        (SELECT ms.role FROM memberships ms WHERE ms.room = r.name AND ms.subject = $2) AS role
      FROM rooms r WHERE r.name = $1`,
    values: [room, subject],
  });
  return rows[0];
}

/**
 * readAccess under the room's row lock FOR KEY SHARE, held until the write
 * commits: a membership removal or a visibility change (lockFacts) of the
 * room either committed before (and is seen) or waits for this write.
 */
export async function shareAccess(
  client: pg.PoolClient,
  room: string,
  subject: string,
): Promise<AccessFacts | undefined> {
  await lockRoom(client, room, 'key share');
  return readAccess(client, room, subject);
}
