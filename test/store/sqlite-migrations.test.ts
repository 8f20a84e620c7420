/** SQLite schema upgrades keep every message: a database made at version 1 migrates to the latest. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { runMigrations } from '../../src/domain/migration-runner.ts';
import { sqliteMigrations, sqliteMigrationTarget } from '../../src/store/sqlite/migrations.ts';
import { matchExpression } from '../../src/store/sqlite/search.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { assertUpgradedMessages } from '../support/upgraded-messages.ts';

test('a version 1 database with messages migrates to the latest schema, keeping them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-migrations-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'old.db');
  const old = new Database(file);
  old.pragma('journal_mode = WAL');
  old.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  old.exec(sqliteMigrations[0]!.sql);
  old
    .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, ?, ?)')
    .run(sqliteMigrations[0]!.name, new Date().toISOString());
  const messages = Array.from({ length: 30 }, (_, i) => ({
    id: uuidv7(),
    room: i % 2 === 0 ? 'even' : 'odd',
    author: 'ada',
    content: `message ${i} "quoted" \\ é 😀\ttab\nLF\r\n\u2028 ${'x'.repeat(i)}`,
    createdAt: new Date(Date.UTC(2026, 10, 21, 10, 0, 0, i)).toISOString(),
    updatedAt: new Date(Date.UTC(2026, 10, 21, 10, 0, 1, i)).toISOString(),
    version: 1 + (i % 3),
    replyTo: null,
  }));
  const insert = old.prepare(
    'INSERT INTO messages (id, room, author, content, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  // Inserted out of id order: the upgrade must not depend on the old table's order.
  for (const m of [...messages].reverse()) {
    insert.run(m.id, m.room, m.author, m.content, m.createdAt, m.updatedAt, m.version);
  }
  old.close();

  const store = new SqliteStore({ filename: file, synchronous: 'full' });
  try {
    await store.migrate();
    await assertUpgradedMessages(store, messages);
  } finally {
    await store.close();
  }
  const check = new Database(file, { readonly: true });
  try {
    const versions = check
      .prepare('SELECT version FROM schema_migrations ORDER BY version')
      .pluck();
    assert.deepEqual(
      versions.all(),
      sqliteMigrations.map((m) => m.version),
    );
    const table = check
      .prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'messages'")
      .pluck()
      .get() as string;
    // Keyed by the trigram index's integer, found by id through a unique index (migration 10).
    assert.doesNotMatch(table, /WITHOUT ROWID/);
    assert.match(table, /search_rowid INTEGER PRIMARY KEY/);
    assert.equal(
      check
        .prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'messages_id'")
        .pluck()
        .get(),
      'CREATE UNIQUE INDEX messages_id ON messages (id)',
    );
    // The trigram index is the store's to write (at commit), no trigger's (migration 6).
    assert.deepEqual(
      check.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger'").pluck().all(),
      [],
    );
  } finally {
    check.close();
  }
});

test('migration 10 keeps each search_rowid, so the trigram index still finds every message', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-migration-10-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'v9.db');
  const old = new Database(file);
  await runMigrations(
    sqliteMigrationTarget(old),
    sqliteMigrations.filter((m) => m.version <= 9),
  );
  const insert = old.prepare(
    `INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body,
       search_text, search_rowid, reply_to) VALUES (?, 'r', 'ada', ?, 't', 't', 1, ?, ?, ?, NULL)`,
  );
  const index = old.prepare('INSERT INTO message_search (rowid, text) VALUES (?, ?)');
  // search_rowids out of id order and with gaps, as deletes and edits leave them; one row
  // without any (written around the store) and without an index entry.
  const rows = [
    { id: uuidv7(), text: 'alpha words', rowid: 7 },
    { id: uuidv7(), text: 'beta words', rowid: 3 },
    { id: uuidv7(), text: 'gamma words', rowid: 12 },
    { id: uuidv7(), text: 'delta words', rowid: null },
  ];
  for (const r of rows) {
    insert.run(r.id, r.text, `{"id":"${r.id}"}`, r.text, r.rowid);
    if (r.rowid !== null) index.run(r.rowid, r.text);
  }
  old.close();

  const store = new SqliteStore({ filename: file, synchronous: 'full' });
  await store.migrate();
  await store.close();
  const check = new Database(file, { readonly: true });
  t.after(() => check.close());
  const byId = check.prepare('SELECT search_rowid, body, content FROM messages WHERE id = ?');
  for (const r of rows.filter((r) => r.rowid !== null)) {
    assert.deepEqual(byId.get(r.id), {
      search_rowid: r.rowid,
      body: `{"id":"${r.id}"}`,
      content: r.text,
    });
  }
  // The row without one gets the next after the largest.
  assert.equal((byId.get(rows[3]!.id) as { search_rowid: number }).search_rowid, 13);
  const found = check
    .prepare(
      `SELECT messages.id FROM message_search CROSS JOIN messages
         ON messages.search_rowid = message_search.rowid
       WHERE message_search MATCH ? ORDER BY messages.id`,
    )
    .pluck();
  assert.deepEqual(
    found.all(matchExpression(['words'])),
    rows
      .slice(0, 3)
      .map((r) => r.id)
      .sort(),
  );
  assert.deepEqual(found.all(matchExpression(['beta'])), [rows[1]!.id]);
});
