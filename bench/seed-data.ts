/**
 * Seeds stores fast, without HTTP: the schema comes from the store class's
 * own migrations, the rows from one bulk insert. Messages look like chat:
 * eleven rooms, a hundred authors, 20-200 characters of content, UUIDv7 ids
 * one millisecond apart, so `id` order is creation order as in the service.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { messageJson } from '../src/domain/message-json.ts';
import { searchText } from '../src/domain/search-text.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

export interface SeedRow {
  readonly id: string;
  readonly room: string;
  readonly author: string;
  readonly content: string;
  readonly createdAt: string;
}

const WORDS =
  'the a meeting lunch today tomorrow deploy build review coffee please thanks ok sure later ' +
  'ship bug fix test release chart numbers looks good great idea call me when you can see you';

/** The JSON text the stores keep with each row (what a create would have written). */
function bodyOf(row: SeedRow): string {
  return messageJson({ ...row, updatedAt: row.createdAt, version: 1, replyTo: null });
}

/**
 * Inserts a message into a migrated SQLite file as a create writes it. With
 * this build's schema that includes search (migration 5 and later): the
 * normalized text, a search_rowid and the trigram index entry (written by
 * the store, not a trigger, since migration 6). A baseline's schema may have
 * none of it: then the upgrade fills it in.
 */
export function sqliteMessageInserter(db: Database.Database): (row: SeedRow) => void {
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('messages');
  const insert = db.prepare(
    columns.includes('search_text')
      ? `INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body,
           search_text, search_rowid) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`
      : 'INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body) VALUES (?, ?, ?, ?, ?, ?, 1, ?)',
  );
  if (!columns.includes('search_text')) {
    return (r) =>
      insert.run(r.id, r.room, r.author, r.content, r.createdAt, r.createdAt, bodyOf(r));
  }
  const triggers = db
    .prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name = ?")
    .pluck()
    .get('messages_search_insert') as number;
  const index = db.prepare('INSERT INTO message_search (rowid, text) VALUES (?, ?)');
  let rowid = db
    .prepare('SELECT COALESCE(max(search_rowid), 0) FROM messages')
    .pluck()
    .get() as number;
  return (r) => {
    const text = searchText(r.content);
    rowid++;
    insert.run(r.id, r.room, r.author, r.content, r.createdAt, r.createdAt, bodyOf(r), text, rowid);
    if (triggers === 0) index.run(rowid, text);
  };
}

/** Whether a PostgreSQL schema's messages have search_text (this build's: migration 6 and later). */
export async function postgresHasSearchText(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query(
    `SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'messages' AND column_name = 'search_text'`,
  );
  return rows.length > 0;
}

/** A UUIDv7 for `ms`: 48-bit time, version 7, variant 10, random rest. */
export function uuidv7At(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0') + randomBytes(10).toString('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Picks a row's room from the seeded random sequence (the default: eleven rooms, half `general`). */
export type RoomPicker = (next: () => number) => string;

const elevenRooms: RoomPicker = (next) => {
  const roll = next() % 20;
  return roll < 10 ? 'general' : `room-${roll - 10}`;
};

/** `count` chat messages, oldest first, ending about now. */
export function* seedRows(count: number, pickRoom: RoomPicker = elevenRooms): Generator<SeedRow> {
  const words = WORDS.split(' ');
  const start = Date.now() - count - 60_000;
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state;
  };
  for (let i = 0; i < count; i++) {
    const ms = start + i;
    const length = 20 + (next() % 181);
    let content = '';
    while (content.length < length) content += `${words[next() % words.length]} `;
    yield {
      id: uuidv7At(ms),
      room: pickRoom(next),
      author: `user-${next() % 100}`,
      content: content.slice(0, length).trim(),
      createdAt: new Date(ms).toISOString(),
    };
  }
}

/** Keeps every k-th id so the sample spans the whole table (at most `max` ids). */
export function idSampler(count: number, max: number) {
  const every = Math.max(1, Math.ceil(count / max));
  const ids: string[] = [];
  let i = 0;
  return {
    offer(id: string) {
      if (i++ % every === 0) ids.push(id);
    },
    write(file: string) {
      writeFileSync(file, `${ids.join('\n')}\n`);
      return ids;
    },
  };
}

/** How the rows of a seeding are made, and who else sees each of them. */
export interface FillOptions {
  readonly pickRoom?: RoomPicker;
  /** Sees every row inserted, in order (to seed what refers to messages). */
  readonly onRow?: (row: SeedRow) => void;
}

/** A fresh SQLite file with `count` messages; returns a sample of its ids. */
export async function seedSqlite(
  file: string,
  count: number,
  idsFile: string,
  options: FillOptions = {},
): Promise<string[]> {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  const store = new SqliteStore({ filename: file, synchronous: 'off' });
  await store.migrate();
  await store.close();
  return fillSqlite(file, count, idsFile, options);
}

/**
 * Bulk-inserts `count` messages into a SQLite file already migrated (by this
 * build or another: the messages columns are the same since version 3).
 */
export function fillSqlite(
  file: string,
  count: number,
  idsFile: string,
  options: FillOptions = {},
): string[] {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const insert = sqliteMessageInserter(db);
  const sample = idSampler(count, 100_000);
  let chunk: SeedRow[] = [];
  const flush = db.transaction((rows: SeedRow[]) => {
    for (const r of rows) insert(r);
  });
  for (const row of seedRows(count, options.pickRoom)) {
    sample.offer(row.id);
    options.onRow?.(row);
    chunk.push(row);
    if (chunk.length === 50_000) {
      flush(chunk);
      chunk = [];
    }
  }
  flush(chunk);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return sample.write(idsFile);
}

/** A byte-for-byte copy of a seeded (checkpointed, closed) SQLite file. */
export function copySqlite(from: string, to: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(to + suffix, { force: true });
  copyFileSync(from, to);
}

export function removeSqlite(file: string): void {
  // '-lock': the service's hold on the file (src/store/sqlite/instance-lock.ts), once it stopped.
  for (const suffix of ['', '-wal', '-shm', '-lock']) rmSync(file + suffix, { force: true });
}

/** Migrates a PostgreSQL schema through this build's store class. */
export async function migratePostgres(url: string): Promise<void> {
  const store = new PostgresStore({
    url,
    poolSize: 1,
    timeoutMs: 600_000,
    onBackgroundError: () => undefined,
  });
  await store.migrate();
  await store.close();
}

/** Migrates a PostgreSQL schema through the store class and bulk-inserts `count` messages. */
export async function seedPostgres(
  url: string,
  count: number,
  idsFile: string,
  options: FillOptions = {},
): Promise<string[]> {
  await migratePostgres(url);
  return fillPostgres(url, count, idsFile, options);
}

/** A client on the schema of `url` (its `schema` parameter as search_path). */
export async function schemaClient(url: string): Promise<pg.Client> {
  const schema = new URL(url).searchParams.get('schema');
  const base = new URL(url);
  base.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: base.toString() });
  await client.connect();
  if (schema !== null) await client.query(`SET search_path = ${schema}`);
  return client;
}

/**
 * Leaves freshly seeded tables as a default PostgreSQL server leaves an
 * insert-only table at rest: vacuumed (hint bits set, every page all-visible,
 * so an index-only scan reads no heap) and analyzed. On a default server
 * autovacuum does this after the first 1,000 rows plus a fifth of the table
 * are inserted; these machines run PostgreSQL with autovacuum off, and a
 * table only ANALYZEd made every index-only scan of the bench (the probe of
 * `around`, reaction counts, unread counts) visit the heap, and the first
 * reads of each page write its hint bits. On a live table the newest pages,
 * the ones read most, are not vacuumed yet: this is the table at rest, the
 * best case for them.
 */
export async function settleTables(
  client: pg.ClientBase,
  tables: readonly string[],
): Promise<void> {
  // One statement: VACUUM cannot run in the implicit transaction of several.
  await client.query(`VACUUM (ANALYZE) ${tables.join(', ')}`);
}

/** Rows inserted as a create writes them (with `search_text` when `search`), in one statement. */
export async function insertPostgresRows(
  client: pg.ClientBase,
  rows: readonly SeedRow[],
  search: boolean,
): Promise<void> {
  await client.query(
    `INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body
       ${search ? ', search_text' : ''})
     SELECT id, room, author, content, at, at, 1, body ${search ? ', search_text' : ''}
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
       $7::text[]) AS t(id, room, author, content, at, body, search_text)`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.room),
      rows.map((r) => r.author),
      rows.map((r) => r.content),
      rows.map((r) => r.createdAt),
      rows.map(bodyOf),
      search ? rows.map((r) => searchText(r.content)) : [],
    ],
  );
}

/**
 * Bulk-inserts `count` messages into a PostgreSQL schema already migrated (by
 * this build or another), then settles it (settleTables).
 */
export async function fillPostgres(
  url: string,
  count: number,
  idsFile: string,
  options: FillOptions = {},
): Promise<string[]> {
  const client = await schemaClient(url);
  const sample = idSampler(count, 100_000);
  try {
    // As a create writes it: with search_text where the schema has it (else the upgrade fills it).
    const search = await postgresHasSearchText(client);
    let chunk: SeedRow[] = [];
    const flush = async () => {
      if (chunk.length === 0) return;
      await insertPostgresRows(client, chunk, search);
      chunk = [];
    };
    for (const row of seedRows(count, options.pickRoom)) {
      sample.offer(row.id);
      options.onRow?.(row);
      chunk.push(row);
      if (chunk.length === 10_000) await flush();
    }
    await flush();
    await settleTables(client, ['messages']);
  } finally {
    await client.end();
  }
  return sample.write(idsFile);
}
