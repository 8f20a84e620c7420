/**
 * Rooms, memberships and read markers seeded straight into a migrated store
 * (as seed-data.ts does for messages): the layouts of the `user-rooms` and
 * `streams` groups, written by bulk insert into the tables of SQLite
 * migration 4 and PostgreSQL migration 5.
 */
import Database from 'better-sqlite3';
import { schemaClient, settleTables, type FillOptions, type SeedRow } from './seed-data.ts';

export interface RoomsSeed {
  readonly rooms: ReadonlyArray<{ name: string; visibility: 'public' | 'private' }>;
  readonly memberships: ReadonlyArray<{ room: string; subject: string; role: 'member' | 'owner' }>;
  readonly markers: ReadonlyArray<{ room: string; subject: string; lastRead: string | null }>;
}

/** Before every seeded message, so a room's activity is its newest message's time. */
const ROOMS_CREATED_AT = new Date(Date.now() - 30 * 86_400_000).toISOString();

/** Writes the layout into a SQLite file migrated to version 4 or later. */
export function writeRoomsSqlite(file: string, seed: RoomsSeed): void {
  const db = new Database(file);
  try {
    const room = db.prepare(
      `INSERT OR IGNORE INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
       VALUES (?, ?, '', NULL, ?, ?, 1)`,
    );
    const member = db.prepare(
      'INSERT INTO memberships (room, subject, role, joined_at) VALUES (?, ?, ?, ?)',
    );
    const marker = db.prepare(
      'INSERT INTO read_markers (room, subject, last_read, version) VALUES (?, ?, ?, 1)',
    );
    db.transaction(() => {
      for (const r of seed.rooms)
        room.run(r.name, r.visibility, ROOMS_CREATED_AT, ROOMS_CREATED_AT);
      for (const m of seed.memberships) member.run(m.room, m.subject, m.role, ROOMS_CREATED_AT);
      for (const k of seed.markers) marker.run(k.room, k.subject, k.lastRead);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Writes the layout into a PostgreSQL schema migrated to version 5 or later, then settles it (settleTables). */
export async function writeRoomsPostgres(url: string, seed: RoomsSeed): Promise<void> {
  const client = await schemaClient(url);
  try {
    await client.query(
      `INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
       SELECT name, visibility, '', NULL, $3::timestamptz, $3::timestamptz, 1
       FROM unnest($1::text[], $2::text[]) AS t(name, visibility)
       ON CONFLICT (name) DO NOTHING`,
      [seed.rooms.map((r) => r.name), seed.rooms.map((r) => r.visibility), ROOMS_CREATED_AT],
    );
    await client.query(
      `INSERT INTO memberships (room, subject, role, joined_at)
       SELECT room, subject, role, $4::timestamptz
       FROM unnest($1::text[], $2::text[], $3::text[]) AS t(room, subject, role)`,
      [
        seed.memberships.map((m) => m.room),
        seed.memberships.map((m) => m.subject),
        seed.memberships.map((m) => m.role),
        ROOMS_CREATED_AT,
      ],
    );
    await client.query(
      `INSERT INTO read_markers (room, subject, last_read, version)
       SELECT room, subject, last_read, 1
       FROM unnest($1::text[], $2::text[], $3::uuid[]) AS t(room, subject, last_read)`,
      [
        seed.markers.map((k) => k.room),
        seed.markers.map((k) => k.subject),
        seed.markers.map((k) => k.lastRead),
      ],
    );
    await settleTables(client, ['rooms', 'memberships', 'read_markers']);
  } finally {
    await client.end();
  }
}

/** The subject whose rooms `user-rooms` asks for. */
export const USER_ROOMS_SUBJECT = 'bench-user';
const USER_ROOMS_ROOMS = 1000;
/** The subject is a member of every fifth room: 200 of the 1,000. */
const isSubjectsRoom = (i: number) => i % 5 === 0;
const roomName = (i: number) => `r-${String(i).padStart(4, '0')}`;
/** How far behind its room's newest message the subject's marker is kept (up to this many). */
const KEEP_BEHIND = 300;

/**
 * `user-rooms`: the messages spread evenly over 1,000 rooms (one in ten
 * private); the subject is a member (owner of one in four) of 200 of them,
 * with markers of every kind: never set (the unread count runs to its cap),
 * at the newest message (0 unread), 20 behind, 250 behind (capped). A hundred
 * other users are members of 20 rooms each, so the memberships index holds
 * more than the subject. Call `fill` to seed the messages, then `layout()`.
 */
export function userRoomsLayout(): { fill: FillOptions; layout(): RoomsSeed } {
  const recent = new Map<string, string[]>();
  let picked = 0;
  return {
    fill: {
      // In turn, so every room holds the same number: the seeded generator's low bits cycle
      // with a short period (a linear congruential generator modulo 2^31), and `next() % 1000`
      // put every message in 125 of the rooms, and no marker in any of them.
      pickRoom: () => roomName(picked++ % USER_ROOMS_ROOMS),
      onRow: (row: SeedRow) => {
        if (!isSubjectsRoom(Number(row.room.slice(2)))) return;
        const ids = recent.get(row.room) ?? [];
        ids.push(row.id);
        if (ids.length > KEEP_BEHIND * 2) ids.splice(0, ids.length - KEEP_BEHIND);
        recent.set(row.room, ids);
      },
    },
    layout: () => {
      const rooms: RoomsSeed['rooms'][number][] = [];
      const memberships: RoomsSeed['memberships'][number][] = [];
      const markers: RoomsSeed['markers'][number][] = [];
      for (let i = 0; i < USER_ROOMS_ROOMS; i++) {
        const name = roomName(i);
        rooms.push({ name, visibility: i % 10 === 3 ? 'private' : 'public' });
        if (!isSubjectsRoom(i)) continue;
        memberships.push({
          room: name,
          subject: USER_ROOMS_SUBJECT,
          role: i % 20 === 0 ? 'owner' : 'member',
        });
        const ids = recent.get(name) ?? [];
        const behind = [null, 0, 20, 250][(i / 5) % 4]!;
        const at = behind === null ? undefined : ids[ids.length - 1 - behind];
        markers.push({ room: name, subject: USER_ROOMS_SUBJECT, lastRead: at ?? null });
      }
      for (let u = 0; u < 100; u++) {
        const mine = new Set<number>();
        for (let k = 0; mine.size < 20; k++) mine.add((u * 37 + k * 53) % USER_ROOMS_ROOMS);
        for (const i of mine)
          memberships.push({ room: roomName(i), subject: `user-${u}`, role: 'member' });
      }
      return { rooms, memberships, markers };
    },
  };
}

/** `streams`: 100 rooms, the first 10 private; 1,000 subjects, each stream one of them. */
export const STREAM_ROOMS = Array.from({ length: 100 }, (_, i) =>
  i < 10 ? `priv-${i}` : `pub-${String(i).padStart(2, '0')}`,
);
export const STREAM_SUBJECTS = Array.from(
  { length: 1000 },
  (_, i) => `sub-${String(i).padStart(4, '0')}`,
);
/** Posts everywhere: owner of every private room (it holds no stream). */
export const STREAM_WRITER = 'bench-writer';

/** One subject in ten is a member of each private room (each subject of one, on average). */
export function streamMembers(room: string): Set<string> {
  if (!room.startsWith('priv-')) return new Set(STREAM_SUBJECTS);
  const p = Number(room.slice(5));
  return new Set(STREAM_SUBJECTS.filter((_, s) => (s * 7 + p * 13) % 10 === 0));
}

export function streamsLayout(): RoomsSeed {
  const memberships: RoomsSeed['memberships'][number][] = [];
  for (const room of STREAM_ROOMS.filter((r) => r.startsWith('priv-'))) {
    memberships.push({ room, subject: STREAM_WRITER, role: 'owner' });
    for (const subject of streamMembers(room)) memberships.push({ room, subject, role: 'member' });
  }
  return {
    rooms: STREAM_ROOMS.map((name) => ({
      name,
      visibility: name.startsWith('priv-') ? 'private' : 'public',
    })),
    memberships,
    markers: [],
  };
}
