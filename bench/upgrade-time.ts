/**
 * How long the upgrade that added replies, revisions and reactions takes on a
 * store that holds `count` messages written by the schema before it (SQLite
 * version 6, PostgreSQL version 7): the messages are seeded without HTTP, their
 * stored texts put back as that schema wrote them (no `replyTo`), then the
 * store class migrates to the latest version, timed.
 *
 * `sqlite-rowid` times SQLite's migration 10 alone instead (the messages table
 * rebuilt as a rowid table), from version 9 with the search text and trigram
 * entries a create writes, and gives the file's size before and after and the
 * pages the old table left free inside it.
 *
 * Usage: node --import tsx bench/upgrade-time.ts <sqlite|sqlite-rowid|postgres> [count, default 1000000]
 * (PostgreSQL: BENCH_PG_URL or postgres://postgres@127.0.0.1:5432/test, a schema of its own, dropped after.)
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runMigrations } from '../src/domain/migration-runner.ts';
import { postgresMigrations, postgresMigrationTarget } from '../src/store/postgres/migrations.ts';
import { sqliteMigrations, sqliteMigrationTarget } from '../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { fillPostgres, fillSqlite, migratePostgres } from './seed-data.ts';

const TMP = join(import.meta.dirname, 'results', 'tmp');
/** The field the upgrade adds to every stored text, as this build's seed writes it. */
const REPLY_TO = ',"replyTo":null}';

const SQLITE_FILE = join(TMP, 'upgrade-time.db');

function removeFile(): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(SQLITE_FILE + suffix, { force: true });
}

/** A SQLite file at schema `version` holding `count` messages seeded without HTTP. */
async function sqliteAt(version: number, count: number): Promise<void> {
  removeFile();
  const db = new Database(SQLITE_FILE);
  db.pragma('journal_mode = WAL');
  await runMigrations(
    sqliteMigrationTarget(db),
    sqliteMigrations.filter((m) => m.version <= version),
  );
  db.close();
  fillSqlite(SQLITE_FILE, count, join(TMP, 'upgrade-time-ids.txt'));
}

/** The store class's migration to the latest version, timed in ms. */
async function timedMigrate(): Promise<number> {
  const store = new SqliteStore({ filename: SQLITE_FILE, synchronous: 'full' });
  const start = Date.now();
  await store.migrate();
  const ms = Date.now() - start;
  await store.close();
  return ms;
}

async function sqlite(count: number): Promise<number> {
  await sqliteAt(6, count);
  const raw = new Database(SQLITE_FILE);
  raw.exec(`UPDATE messages SET body = substr(body, 1, length(body) - ${REPLY_TO.length}) || '}'
    WHERE body LIKE '%${REPLY_TO}'`);
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.close();
  const ms = await timedMigrate();
  removeFile();
  return ms;
}

async function sqliteRowid(count: number): Promise<string> {
  await sqliteAt(9, count);
  const before = statSync(SQLITE_FILE).size;
  const ms = await timedMigrate();
  const check = new Database(SQLITE_FILE, { readonly: true });
  const pageSize = check.pragma('page_size', { simple: true }) as number;
  const free = (check.pragma('freelist_count', { simple: true }) as number) * pageSize;
  check.close();
  const after = statSync(SQLITE_FILE).size;
  removeFile();
  const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;
  return (
    `sqlite: migration 10 on ${count} messages took ${ms} ms; the file ${mib(before)} before, ` +
    `${mib(after)} after, ${mib(free)} of it free pages (reused by later writes; VACUUM returns them)`
  );
}

async function postgres(count: number): Promise<number> {
  const base = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `upgrade_time_${process.pid}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`SET search_path = ${schema}`);
    await runMigrations(
      postgresMigrationTarget(admin, schema),
      postgresMigrations.filter((m) => m.version <= 7),
    );
    const url = `${base}?schema=${schema}`;
    await fillPostgres(url, count, join(TMP, 'upgrade-time-ids.txt'));
    await admin.query(`UPDATE messages SET body = left(body, -${REPLY_TO.length}) || '}'
      WHERE body LIKE '%${REPLY_TO}'`);
    await admin.query('VACUUM ANALYZE messages');
    const start = Date.now();
    await migratePostgres(url);
    return Date.now() - start;
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

const engine = process.argv[2];
const count = Number(process.argv[3] ?? 1_000_000);
if (engine === 'sqlite-rowid') {
  console.log(await sqliteRowid(count));
} else if (engine === 'sqlite' || engine === 'postgres') {
  const ms = engine === 'sqlite' ? await sqlite(count) : await postgres(count);
  console.log(`${engine}: the upgrade of ${count} messages took ${ms} ms`);
} else {
  throw new Error('usage: bench/upgrade-time.ts <sqlite|sqlite-rowid|postgres> [count]');
}
