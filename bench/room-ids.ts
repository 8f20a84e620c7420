/**
 * The room of each sampled id, for a room's history page (`room-history.lua`):
 * the id list a seed wrote, read back from the store as `<id> <room>` lines.
 * A chat client reads a room's history, which walks the (room, id) index,
 * not the store-wide page's id key.
 */
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { readIds } from './conversations.ts';
import { schemaClient } from './seed-data.ts';

function write(out: string, pairs: readonly (readonly [string, string])[]): string {
  writeFileSync(out, `${pairs.map(([id, room]) => `${id} ${room}`).join('\n')}\n`);
  return out;
}

export function sqliteRoomIds(dbFile: string, idsFile: string, out: string): string {
  const db = new Database(dbFile, { readonly: true });
  try {
    const room = db.prepare('SELECT room FROM messages WHERE id = ?').pluck();
    return write(
      out,
      readIds(idsFile).map((id) => [id, room.get(id) as string] as const),
    );
  } finally {
    db.close();
  }
}

export async function postgresRoomIds(url: string, idsFile: string, out: string): Promise<string> {
  const client = await schemaClient(url);
  try {
    const { rows } = await client.query<{ id: string; room: string }>(
      'SELECT id::text AS id, room FROM messages WHERE id = ANY($1::uuid[])',
      [readIds(idsFile)],
    );
    return write(
      out,
      rows.map((r) => [r.id, r.room] as const),
    );
  } finally {
    await client.end();
  }
}
