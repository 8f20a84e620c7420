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
import { messageJson } from '../../src/domain/message-json.ts';
import { searchQuery } from '../../src/domain/search-text.ts';

/** The store on a test schema's URL, as the service would open it. */
function storeOf(url: string) {
  return new PostgresStore({
    url,
    poolSize: 2,
    timeoutMs: 5000,
    onBackgroundError: () => undefined,
  });
}

/** A schema as an older release left it: the migrations up to `version`, applied and recorded. */
async function schemaAtVersion(client: pg.Client, schema: string, version: number) {
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`SET search_path = ${schema}`);
  await client.query(
    'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  for (const migration of postgresMigrations.filter((m) => m.version <= version)) {
    await client.query(migration.sql);
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
      migration.version,
      migration.name,
    ]);
  }
}

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
    replyTo: null,
  }));
  try {
    await schemaAtVersion(client, schema, 3);
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

  const store = storeOf(db.url);
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

test('a version 4 schema with messages and changes migrates to rooms: backfilled rooms, general, change data', async (t) => {
  const skip = skipUnless(await postgresAvailable(), `PostgreSQL at ${PG_BASE_URL}`);
  if (skip !== false) return t.skip(skip);
  const db = await postgresEngine.createDatabase();
  t.after(() => db.cleanup());
  const schema = new URL(db.url).searchParams.get('schema')!;

  // Rooms whose oldest message is not their first by id: the backfill takes the oldest createdAt.
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, 0, ms)).toISOString();
  const messages: Message[] = [
    { room: 'odd', author: 'ada', createdAt: at(500) },
    { room: 'even', author: 'bob', createdAt: at(200) },
    { room: 'odd', author: 'bob', createdAt: at(100) },
    { room: 'B-side', author: 'ada', createdAt: at(300) },
    { room: 'even', author: 'ada', createdAt: at(400) },
  ].map((m, i) => ({
    ...m,
    id: uuidv7(),
    content: `m${i}`,
    updatedAt: m.createdAt,
    version: 1,
    replyTo: null,
  }));

  const client = new pg.Client({ connectionString: PG_BASE_URL });
  await client.connect();
  try {
    await schemaAtVersion(client, schema, 4);
    // As version 4 stored them: one call of its create function, the changes in order.
    await client.query(
      `SELECT create_messages($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
         $6::text[], $7::text[], $8::text[], $9::text[])`,
      [
        messages.map((m) => m.id),
        messages.map((m) => m.room),
        messages.map((m) => m.author),
        messages.map((m) => m.content),
        messages.map((m) => m.createdAt),
        messages.map(messageJson),
        messages.map(() => null),
        messages.map(() => null),
        messages.map(() => null),
      ],
    );
  } finally {
    await client.end();
  }

  const store = storeOf(db.url);
  try {
    const before = new Date();
    await store.migrate();
    const after = new Date();

    const changes = await store.changes.since(0, 100);
    assert.deepEqual(
      changes.map(({ seq: _, ...change }) => change),
      messages.map((m) => ({
        kind: 'message.created',
        room: m.room,
        data: messageJson(m),
        subject: null,
        madePrivate: false,
      })),
    );

    const page = await store.rooms.list({ limit: 10 });
    assert.deepEqual(
      page.items.map((r) => r.name),
      ['B-side', 'even', 'general', 'odd'],
      'code point order',
    );
    assert.equal(page.more, false);
    assert.equal(page.latestSeq, changes.at(-1)!.seq);
    const oldest = (room: string) =>
      messages
        .filter((m) => m.room === room)
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))[0]!.createdAt;
    for (const room of page.items) {
      const { name, createdAt, updatedAt, ...rest } = room;
      assert.deepEqual(
        rest,
        { visibility: 'public', topic: '', createdBy: null, version: 1 },
        name,
      );
      assert.equal(updatedAt, createdAt, name);
      if (name === 'general') {
        assert.match(createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        const upgradedAt = Date.parse(createdAt);
        assert.ok(upgradedAt >= before.getTime() - 1 && upgradedAt <= after.getTime() + 1);
      } else {
        assert.equal(createdAt, oldest(name), name);
      }
      assert.deepEqual(await store.rooms.get(name), room);
    }

    // No owners, no memberships, no markers: the rooms are as they were, readable by all.
    assert.deepEqual(await store.rooms.accessSnapshot(), {
      latestSeq: changes.at(-1)!.seq,
      privateRooms: [],
      memberships: [],
    });
    assert.deepEqual((await store.members.list('odd', { limit: 10 })).items, []);
    assert.deepEqual(await store.readMarkers.get('odd', 'ada'), {
      room: 'odd',
      subject: 'ada',
      lastRead: null,
      unread: 1,
      version: 0,
    });

    // A post to a backfilled room joins nobody; a post to a new name creates it.
    const next = messages.at(-1)!;
    await store.messages.create({
      id: uuidv7(),
      room: 'odd',
      author: 'cy',
      content: 'hi',
      createdAt: next.createdAt,
    });
    const createdAt = at(900);
    const created = await store.messages.create({
      id: uuidv7(),
      room: 'new',
      author: 'cy',
      content: 'first',
      createdAt,
    });
    const latest = (await store.changes.since(changes.at(-1)!.seq, 100)).map(
      ({ seq: _, ...c }) => c,
    );
    assert.deepEqual(
      latest.map((c) => [c.kind, c.room, c.subject]),
      [
        ['message.created', 'odd', null],
        ['room.created', 'new', null],
        ['member.added', 'new', 'cy'],
        ['message.created', 'new', null],
      ],
    );
    assert.equal(
      latest[1]!.data,
      `{"name":"new","visibility":"public","topic":"","createdBy":"cy","createdAt":"${createdAt}","updatedAt":"${createdAt}","version":1}`,
    );
    assert.equal(
      latest[2]!.data,
      `{"room":"new","subject":"cy","role":"owner","joinedAt":"${createdAt}"}`,
    );
    assert.equal(latest[3]!.data, messageJson(created));
  } finally {
    await store.close();
  }
});

test('a version 6 schema whose messages have no search_text yet is filled by the upgrade itself; a start then does no search work', async (t) => {
  const skip = skipUnless(await postgresAvailable(), `PostgreSQL at ${PG_BASE_URL}`);
  if (skip !== false) return t.skip(skip);
  const db = await postgresEngine.createDatabase();
  t.after(() => db.cleanup());
  const schema = new URL(db.url).searchParams.get('schema')!;
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, 0, ms)).toISOString();
  const messages: Message[] = ['Die STRAẞE', 'a ﬁle here', 'ＡＢＣ and more', 'plain text'].map(
    (content, i) => ({
      id: uuidv7(),
      room: 'general',
      author: 'ada',
      content,
      createdAt: at(i),
      updatedAt: at(i),
      version: 1,
      replyTo: null,
    }),
  );

  const client = new pg.Client({ connectionString: PG_BASE_URL });
  await client.connect();
  try {
    await schemaAtVersion(client, schema, 6);
    // Rows from before search as version 6 found them (the start filled them in, until now).
    await client.query(
      `INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
         $5::timestamptz[], $6::int[], $7::text[])`,
      [
        messages.map((m) => m.id),
        messages.map((m) => m.room),
        messages.map((m) => m.author),
        messages.map((m) => m.content),
        messages.map((m) => m.createdAt),
        messages.map((m) => m.version),
        messages.map(messageJson),
      ],
    );
  } finally {
    await client.end();
  }

  const store = storeOf(db.url);
  t.after(() => store.close());
  await store.migrate();
  for (const [q, expected] of [
    ['straße', [0]],
    ['FILE', [1]],
    ['abc', [2]],
    ['text', [3]],
    ['and ere', []],
  ] as const) {
    const page = await store.messages.list({ order: 'asc', limit: 10, q: searchQuery(q, false) });
    assert.equal(page.json, expected.map((i: number) => messageJson(messages[i]!)).join(','), q);
  }
  const check = new pg.Client({ connectionString: PG_BASE_URL });
  await check.connect();
  try {
    const { rows } = await check.query(
      `SELECT is_nullable FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'messages' AND column_name = 'search_text'`,
      [schema],
    );
    assert.deepEqual(rows, [{ is_nullable: 'NO' }]);
  } finally {
    await check.end();
  }

  // Another start of the same store: migrations are recorded, and nothing reads messages.
  const statements: string[] = [];
  const query = pg.Client.prototype.query;
  t.mock.method(pg.Client.prototype, 'query', function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    statements.push(typeof first === 'string' ? first : (first?.text ?? ''));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  });
  const again = storeOf(db.url);
  try {
    await again.migrate();
  } finally {
    await again.close();
    t.mock.restoreAll();
  }
  assert.ok(statements.some((s) => s.includes('schema_migrations')));
  assert.deepEqual(
    statements.filter((s) => /\bmessages\b/i.test(s)),
    [],
  );
});
