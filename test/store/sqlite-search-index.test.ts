/**
 * How the trigram index on SQLite is written. The store writes it at the end
 * of each group commit (search-index.ts), not inside each write's savepoint:
 * FTS5 writes its pending terms out as a segment at every savepoint, so
 * creates committed together must leave one segment, not one per create. And
 * its segments are merged by migration 9's policy, not FTS5's defaults.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { matchExpression } from '../../src/store/sqlite/search.ts';
import { searchQuery } from '../../src/domain/search-text.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

/** A migrated store on a file of its own, removed after the test. */
async function migratedStore(
  t: TestContext,
  name: string,
): Promise<{ file: string; store: SqliteStore }> {
  const dir = mkdtempSync(join(tmpdir(), `sqlite-search-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, `${name}.db`);
  const store = new SqliteStore({ filename: file, synchronous: 'full' });
  t.after(() => store.close());
  await store.migrate();
  return { file, store };
}

test('creates committed together are written to the trigram index once, as one segment, and are found', async (t) => {
  const { file, store } = await migratedStore(t, 'index');
  const created = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      store.messages.create({
        id: uuidv7(),
        room: 'general',
        author: 'ada',
        content: `Message number ${i}, with words of its own: w${i}x${i}`,
        createdAt: new Date(Date.UTC(2026, 10, 23, 10, 0, 0, i)).toISOString(),
      }),
    ),
  );
  const check = new Database(file, { readonly: true });
  try {
    // One transaction (one change-log batch), and its index entries in one segment.
    const segments = check
      .prepare('SELECT count(DISTINCT segid) FROM message_search_idx')
      .pluck()
      .get();
    assert.equal(segments, 1);
    // Each message's own trigrams are in the index, under its search_rowid.
    const match = check.prepare(
      `SELECT messages.id FROM message_search JOIN messages
         ON messages.search_rowid = message_search.rowid WHERE message_search MATCH ?`,
    );
    for (const i of [0, 7, 19]) {
      const trigrams = matchExpression([`w${i}x${i}`]);
      assert.deepEqual(match.pluck().all(trigrams), [created[i]!.id], trigrams);
    }
  } finally {
    check.close();
  }
});

test('a search whose walk read its whole range answers from the walk: the store-wide index is not asked', async (t) => {
  const { file, store } = await migratedStore(t, 'range');
  const at = (i: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, 0, i)).toISOString();
  const small: string[] = [];
  for (let i = 0; i < 30; i += 1) {
    const id = uuidv7();
    if (i % 6 === 0) small.push(id);
    await store.messages.create({
      id,
      room: 'small',
      author: 'ada',
      content: i % 6 === 0 ? `a needle ${i}` : `hay ${i}`,
      createdAt: at(i),
    });
  }
  // The index no longer holds the small room's rows: only a walk can still find them.
  const writer = new Database(file);
  try {
    writer
      .prepare(
        `DELETE FROM message_search WHERE rowid IN (SELECT search_rowid FROM messages WHERE room = 'small')`,
      )
      .run();
  } finally {
    writer.close();
  }
  const page = await store.messages.list({
    room: 'small',
    order: 'asc',
    limit: 50,
    q: searchQuery('needle', true),
  });
  assert.equal(page.count, small.length);
  assert.deepEqual(
    (JSON.parse(`[${page.json}]`) as { id: string }[]).map((m) => m.id),
    small,
  );
});

test("migration 9 sets the trigram index's merge policy: no level merged in one go before 64 segments, and each segment's rows found", async (t) => {
  const { file, store } = await migratedStore(t, 'merge');
  const ids: string[] = [];
  // One commit each: one small segment each, too small to earn automerge's work (FTS5 merges
  // a step per 64 pages written). With FTS5's crisismerge of 16 the 16th commit merges the
  // first 16 in one go, and 20 commits leave 5 segments.
  for (let i = 0; i < 20; i += 1) {
    const id = uuidv7();
    ids.push(id);
    await store.messages.create({
      id,
      room: 'general',
      author: 'ada',
      content: `Commit ${i} says needle${i % 3}`,
      createdAt: new Date(Date.UTC(2026, 10, 24, 10, 0, 0, i)).toISOString(),
    });
  }
  const check = new Database(file, { readonly: true });
  try {
    const config = Object.fromEntries(
      check.prepare('SELECT k, v FROM message_search_config').raw().all() as [string, unknown][],
    );
    assert.equal(config.automerge, 16);
    assert.equal(config.crisismerge, 64);
    const segments = check
      .prepare('SELECT count(DISTINCT segid) FROM message_search_idx')
      .pluck()
      .get();
    assert.equal(segments, 20);
    // The index itself answers, across the segments (a search of so few rows would walk them).
    const match = check.prepare(
      `SELECT messages.id FROM message_search JOIN messages
         ON messages.search_rowid = message_search.rowid WHERE message_search MATCH ?
         ORDER BY messages.id`,
    );
    assert.deepEqual(
      match.pluck().all(matchExpression(['needle1'])),
      ids.filter((_, i) => i % 3 === 1),
    );
  } finally {
    check.close();
  }
});
