/** SQLite schema upgrades keep every message: a database made at version 1 migrates to the latest. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { versionOneDatabase } from '../support/sqlite-version-one.ts';
import { assertUpgradedMessages } from '../support/upgraded-messages.ts';

test('a version 1 database with messages migrates to the latest schema, keeping them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-migrations-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'old.db');
  const old = versionOneDatabase(file);
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
    assert.match(table, /WITHOUT ROWID/);
    // The trigram index is the store's to write (at commit), no trigger's (migration 6).
    assert.deepEqual(
      check.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger'").pluck().all(),
      [],
    );
    // A room's page reads the room index alone (migration 10): it holds each message's JSON.
    assert.deepEqual(
      check.prepare("SELECT name FROM pragma_index_info('messages_room_id')").pluck().all(),
      ['room', 'id', 'author', 'body'],
    );
  } finally {
    check.close();
  }
});
