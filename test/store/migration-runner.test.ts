/**
 * The one migration runner (src/domain/migration-runner.ts) over each
 * engine's target: a migration that fails leaves nothing of itself, the ones
 * before it stay applied, and a list out of version order is refused before
 * anything runs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { runMigrations, type Migration } from '../../src/domain/migration-runner.ts';
import { postgresMigrationTarget } from '../../src/store/postgres/migrations.ts';
import { sqliteMigrationTarget } from '../../src/store/sqlite/migrations.ts';
import { postgresEngine } from '../support/engines.ts';
import { PG_BASE_URL, postgresAvailable, skipUnless } from '../support/prerequisites.ts';

const good: Migration = { version: 1, name: 'one', sql: 'CREATE TABLE one (n INTEGER)' };
const broken: Migration = {
  version: 2,
  name: 'two, broken halfway',
  sql: 'CREATE TABLE two (n INTEGER); INSERT INTO no_such_table VALUES (1)',
};

describe('migration runner on SQLite', () => {
  function withDb(fn: (db: Database.Database) => Promise<void>) {
    return async () => {
      const dir = mkdtempSync(join(tmpdir(), 'migration-runner-'));
      const db = new Database(join(dir, 'm.db'));
      try {
        await fn(db);
      } finally {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      }
    };
  }
  const tables = (db: Database.Database) =>
    db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all();

  it(
    'a failing migration is undone whole; the ones before it stay applied, and a rerun goes on from there',
    withDb(async (db) => {
      const target = sqliteMigrationTarget(db);
      await assert.rejects(runMigrations(target, [good, broken]), /no_such_table/);
      assert.deepEqual(tables(db), ['one', 'schema_migrations']);
      assert.deepEqual(await target.appliedVersions(), [1]);
      const fixed = { ...broken, sql: 'CREATE TABLE two (n INTEGER)' };
      await runMigrations(target, [good, fixed]);
      assert.deepEqual(tables(db), ['one', 'schema_migrations', 'two']);
    }),
  );

  it(
    'versions out of order are refused before anything runs',
    withDb(async (db) => {
      await assert.rejects(
        runMigrations(sqliteMigrationTarget(db), [{ ...good, version: 3 }, broken]),
        /out of order/,
      );
      assert.deepEqual(tables(db), []);
    }),
  );
});

describe('migration runner on PostgreSQL', async () => {
  const skip = skipUnless(await postgresAvailable(), `PostgreSQL at ${PG_BASE_URL}`);

  it('a failing migration is undone whole; the ones before it stay applied', { skip }, async () => {
    const db = await postgresEngine.createDatabase();
    const schema = new URL(db.url).searchParams.get('schema')!;
    const client = new pg.Client({ connectionString: PG_BASE_URL });
    await client.connect();
    try {
      await client.query(`SET search_path = ${schema}`);
      const target = postgresMigrationTarget(client, schema);
      await assert.rejects(runMigrations(target, [good, broken]), /no_such_table/);
      const { rows } = await client.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
        [schema],
      );
      assert.deepEqual(
        rows.map((r) => r.table_name),
        ['one', 'schema_migrations'],
      );
      assert.deepEqual(await target.appliedVersions(), [1]);
    } finally {
      await client.end();
      await db.cleanup();
    }
  });
});
