/**
 * After one large transaction (here an upgrade that rewrites and indexes every
 * message) the write-ahead log does not stay large: once checkpointed, the next
 * write cuts it back to the store's limit. SQLite alone keeps the log at its
 * largest until the last connection closes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { versionOneDatabase } from '../support/sqlite-version-one.ts';

const MIB = 1024 * 1024;

test('the write-ahead log is cut back after a large upgrade, at the next write', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-wal-size-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'old.db');
  const old = versionOneDatabase(file);
  const insert = old.prepare(
    'INSERT INTO messages (id, room, author, content, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, 1)',
  );
  const now = new Date().toISOString();
  // About 30 MB of content: each migration that copies or indexes it writes that much log.
  old.transaction(() => {
    for (let i = 0; i < 4000; i++) {
      insert.run(uuidv7(), `room-${i % 7}`, 'ada', `${i} ${'x'.repeat(7500)}`, now, now);
    }
  })();
  old.close();

  const store = new SqliteStore({ filename: file, synchronous: 'full' });
  try {
    await store.migrate();
    const afterUpgrade = statSync(`${file}-wal`).size;
    assert.ok(afterUpgrade > 16 * MIB, `the upgrade wrote a large log (${afterUpgrade} bytes)`);
    await store.messages.create({
      id: uuidv7(),
      room: 'room-1',
      author: 'ada',
      content: 'after the upgrade',
      createdAt: new Date().toISOString(),
    });
    const afterWrite = statSync(`${file}-wal`).size;
    assert.ok(afterWrite <= 16 * MIB, `the log is cut back (${afterWrite} bytes)`);
  } finally {
    await store.close();
  }
});
