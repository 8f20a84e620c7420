/** Read markers on PostgreSQL: each write in a transaction under the room's row lock (room-sql.ts). */
import type pg from 'pg';
import { markerUpdated } from '../../domain/room-changes.ts';
import type { ReadMarker } from '../../domain/room.ts';
import type { MarkerFacts, MarkerWriteOutcome, ReadMarkerStore } from '../../domain/room-store.ts';
import { appendChange } from './changes.ts';
import type { PostgresSession } from './postgres-store.ts';
import { lockRoom, readAccess, unreadSql } from './room-sql.ts';

/** The marker (version 0 and lastRead null when there is no row) with its unread count. */
const GET_MARKER_COLUMNS = `SELECT rm.last_read::text AS "lastRead",
    COALESCE(rm.version, 0) AS version, ${unreadSql('$1', '$2', 'rm.last_read')} AS unread`;
const GET_MARKER_FROM = `FROM (SELECT 1) one
  LEFT JOIN read_markers rm ON rm.room = $1 AND rm.subject = $2`;

type MarkerRow = Pick<ReadMarker, 'lastRead' | 'version' | 'unread'>;

export class PostgresReadMarkers implements ReadMarkerStore {
  readonly #session: PostgresSession;

  constructor(session: PostgresSession) {
    this.#session = session;
  }

  async get(room: string, subject: string): Promise<ReadMarker> {
    const [row] = await this.#session.query<MarkerRow>(
      'get-read-marker',
      `${GET_MARKER_COLUMNS} ${GET_MARKER_FROM}`,
      [room, subject],
    );
    return { room, subject, ...row! };
  }

  put(
    room: string,
    subject: string,
    lastRead: string,
    decide: (facts: MarkerFacts) => boolean,
    reader: string | null = null,
  ): Promise<MarkerWriteOutcome> {
    return this.#session.transaction(async (client) => {
      // The room's row lock orders this write with the room's other marker and membership
      // writes (which set markers too, under FOR UPDATE), not with writes to its messages (FOR
      // KEY SHARE): readers moving their markers do not wait for posts. A room that does not
      // exist has no message to point at.
      await lockRoom(client, room, 'no key update');
      const { rows } = await client.query<MarkerRow & { in_room: boolean }>({
        name: 'read-marker-facts',
        text: `${GET_MARKER_COLUMNS},
            EXISTS (SELECT 1 FROM messages m WHERE m.id = $3::uuid AND m.room = $1) AS in_room
          ${GET_MARKER_FROM}`,
        values: [room, subject, lastRead],
      });
      const { in_room: messageInRoom, ...stored } = rows[0]!;
      const current: ReadMarker = { room, subject, ...stored };
      // Under the room's lock already (above): a membership write (FOR UPDATE) waits for it.
      const facts: MarkerFacts =
        reader === null
          ? { current, messageInRoom }
          : { current, messageInRoom, access: await readAccess(client, room, reader) };
      if (!decide(facts) || lastRead === current.lastRead) {
        return { marker: current, changed: false };
      }
      const marker = { room, subject, lastRead, version: current.version + 1 };
      await client.query({
        name: 'put-read-marker',
        text: `INSERT INTO read_markers (room, subject, last_read, version) VALUES ($1, $2, $3, $4)
          ON CONFLICT (room, subject) DO UPDATE SET last_read = $3, version = $4`,
        values: [room, subject, lastRead, marker.version],
      });
      const unread = await countUnread(client, room, subject, lastRead);
      // The change log's lock comes last, after every row lock (see migrations.ts).
      await appendChange(client, markerUpdated(marker));
      return { marker: { ...marker, unread }, changed: true };
    });
  }
}

async function countUnread(
  client: pg.PoolClient,
  room: string,
  subject: string,
  lastRead: string | null,
): Promise<number> {
  const { rows } = await client.query<{ unread: number }>({
    name: 'count-unread',
    text: `SELECT ${unreadSql('$1', '$2', '$3::uuid')} AS unread`,
    values: [room, subject, lastRead],
  });
  return rows[0]!.unread;
}
