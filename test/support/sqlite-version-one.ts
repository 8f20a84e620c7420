/** A SQLite file as the first release made it: schema version 1, for upgrade tests. */
import Database from 'better-sqlite3';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.ts';

/** Creates `file` at schema version 1 (WAL mode), open, for the caller to fill and close. */
export function versionOneDatabase(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  db.exec(sqliteMigrations[0]!.sql);
  db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, ?, ?)').run(
    sqliteMigrations[0]!.name,
    new Date().toISOString(),
  );
  return db;
}
