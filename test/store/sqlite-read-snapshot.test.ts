/**
 * SQLite reads of one turn of the event loop share one read transaction
 * (docs/schedulers.md); with BATCHING=off each read is a statement of its own
 * and sees every commit made before it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { defaultConfig } from '../../src/config.ts';
import { createStore } from '../../src/store/create-store.ts';
import { sqliteEngine } from '../support/engines.ts';
import { silent } from '../support/open-store.ts';

for (const batching of [true, false]) {
  test(`reads in one turn, another connection commits between them: batching ${batching ? 'on' : 'off'}`, async (t) => {
    const db = await sqliteEngine.createDatabase();
    const config = defaultConfig({ databaseUrl: db.url, logLevel: 'silent', batching });
    const store = createStore(config, silent);
    const other = new Database(db.url.slice('sqlite:'.length));
    t.after(async () => {
      other.close();
      await store.close();
      await db.cleanup();
    });
    await store.migrate();
    const created = await store.messages.create({
      id: '01900000-0000-7000-8000-000000000001',
      room: 'general',
      author: 'ada',
      content: 'before',
      createdAt: new Date().toISOString(),
    });
    // Both reads start in this same turn (a SQLite read runs when it is called).
    const first = store.messages.get(created.id);
    other.prepare("UPDATE messages SET content = 'after' WHERE id = ?").run(created.id);
    const second = store.messages.get(created.id);
    assert.equal((await first)?.content, 'before');
    assert.equal((await second)?.content, batching ? 'before' : 'after');
    // The next turn reads afresh either way.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await store.messages.get(created.id))?.content, 'after');
  });
}
