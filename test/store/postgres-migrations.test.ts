/** PostgreSQL schema upgrades keep every message: a schema made at version 3 migrates to the latest. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { Message } from '../../src/domain/message.ts';
import { postgresMigrations } from '../../src/store/postgres/migrations.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { postgresEngine } from '../support/engines.ts';
import { PG_BASE_URL, postgresAvailable, skipUnless } from '../support/prerequisites.ts';
import { assertUpgradedMessages } from '../support/upgraded-messages.ts';

test('a version 3 schema with messages migrates to the latest, with their JSON stored byte for byte', async (t) => {
  const skip = skipUnless(await postgresAvailable(), `PostgreSQL at ${PG_BASE_URL}`);
  if (skip !== false) return t.skip(skip);
  const db = await postgresEngine.createDatabase();
  t.after(() => db.cleanup());
  const schema = new URL(db.url).searchParams.get('schema')!;

  const client = new pg.Client({ connectionString: PG_BASE_URL });
  await client.connect();
  const messages: Message[] = Array.from({ length: 30 }, (_, i) => ({
    id: uuidv7(),
    room: i % 2 === 0 ? 'even' : 'odd',
    author: i % 3 === 0 ? 'ada "the" \\ lovelace' : 'ada',
    content: `message ${i} "quoted" \\ é 😀 👩‍👩‍👧\ttab\nLF\r\n\u2028 </script> ${'x'.repeat(i)}`,
    createdAt: new Date(Date.UTC(2026, 10, 21, 10, 0, 0, i)).toISOString(),
    updatedAt: new Date(Date.UTC(2026, 10, 21, 10, 0, 1, i * 7)).toISOString(),
    version: 1 + (i % 3),
  }));
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`SET search_path = ${schema}`);
    await client.query(
      'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    for (const migration of postgresMigrations.filter((m) => m.version <= 3)) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
    }
    // Inserted out of id order: the upgrade must not depend on the table's order.
    for (const m of [...messages].reverse()) {
      await client.query(
        'INSERT INTO messages (id, room, author, content, created_at, updated_at, version) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [m.id, m.room, m.author, m.content, m.createdAt, m.updatedAt, m.version],
      );
    }
  } finally {
    await client.end();
  }

  const store = new PostgresStore({
    url: db.url,
    poolSize: 2,
    timeoutMs: 5000,
    onBackgroundError: () => undefined,
  });
  try {
    await store.migrate();
    await assertUpgradedMessages(store, messages);
    // And a second start finds nothing left to do.
    await store.migrate();
    assert.equal((await store.messages.list({ order: 'asc', limit: 100 })).count, messages.length);
  } finally {
    await store.close();
  }
});
