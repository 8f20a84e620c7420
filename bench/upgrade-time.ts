/**
 * How long the upgrade that added replies, revisions and reactions takes on a
 * store that holds `count` messages written by the schema before it (SQLite
 * version 6, PostgreSQL version 7): the messages are seeded without HTTP, their
 * stored texts put back as that schema wrote them (no `replyTo`), then the
 * store class migrates to the latest version, timed.
 *
 * Usage: node --import tsx bench/upgrade-time.ts <sqlite|postgres> [count, default 1000000]
 * (PostgreSQL: BENCH_PG_URL or postgres://postgres@127.0.0.1:5432/test, a schema of its own, dropped after.)
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runMigrations } from '../src/domain/migration-runner.ts';
import { postgresMigrations, postgresMigrationTarget } from '../src/store/postgres/migrations.ts';
import { sqliteMigrations, sqliteMigrationTarget } from '../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { fillPostgres, fillSqlite, migratePostgres } from './seed-data.ts';

const TMP = join(import.meta.dirname, 'results', 'tmp');
/** The field the upgrade adds to every stored text, as this build's seed writes it. */
const REPLY_TO = ',"replyTo":null}';

async function sqlite(count: number): Promise<number> {
  const file = join(TMP, 'upgrade-time.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  await runMigrations(
    sqliteMigrationTarget(db),
    sqliteMigrations.filter((m) => m.version <= 6),
  );
  db.close();
  fillSqlite(file, count, join(TMP, 'upgrade-time-ids.txt'));
  const raw = new Database(file);
  raw.exec(`UPDATE messages SET body = substr(body, 1, length(body) - ${REPLY_TO.length}) || '}'
    WHERE body LIKE '%${REPLY_TO}'`);
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.close();
  const store = new SqliteStore({ filename: file, synchronous: 'full' });
  const start = Date.now();
  await store.migrate();
  const ms = Date.now() - start;
  await store.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  return ms;
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
if (engine !== 'sqlite' && engine !== 'postgres') {
  throw new Error('usage: bench/upgrade-time.ts <sqlite|postgres> [count]');
}
const ms = engine === 'sqlite' ? await sqlite(count) : await postgres(count);
console.log(`${engine}: the upgrade of ${count} messages took ${ms} ms`);
