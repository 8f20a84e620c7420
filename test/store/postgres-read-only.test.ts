/**
 * PostgreSQL when writes cannot go through. One that takes none (a standby
 * after a failover, a primary turned read-only): reads go on, and every write
 * is a 503 with Retry-After, as when the store cannot be reached, never a 500
 * (each session of the store is made read-only by the URL's `options`, so no
 * other test's database is touched). One whose writes wait past the store
 * timeout: each is a 503, and those not sent yet are never committed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { defaultConfig } from '../../src/config.ts';
import { ErrorKinds, isAppError } from '../../src/errors.ts';
import { createStore } from '../../src/store/create-store.ts';
import { postgresEngine, skipUnlessEngine } from '../support/engines.ts';
import { PG_BASE_URL } from '../support/prerequisites.ts';
import { untilBlockedBy } from '../support/pg-sessions.ts';
import { silent } from '../support/open-store.ts';

function assertUnavailable(error: unknown): true {
  assert.ok(isAppError(error), String(error));
  assert.equal(error.kind, ErrorKinds.storeUnavailable);
  assert.equal(error.headers?.['retry-after'], '1');
  return true;
}

describe('PostgreSQL that takes no writes', async () => {
  const skip = await skipUnlessEngine(postgresEngine);

  it('answers reads, and a 503 with Retry-After to every write', { skip }, async () => {
    const db = await postgresEngine.createDatabase();
    const writable = createStore(
      defaultConfig({ databaseUrl: db.url, logLevel: 'silent' }),
      silent,
    );
    const url = new URL(db.url);
    url.searchParams.set('options', '-c default_transaction_read_only=on');
    const readOnly = createStore(
      defaultConfig({ databaseUrl: url.toString(), logLevel: 'silent' }),
      silent,
    );
    try {
      await writable.migrate();
      const at = '2026-11-25T10:00:00.000Z';
      const stored = await writable.messages.create({
        id: uuidv7(),
        room: 'general',
        author: 'ada',
        content: 'before the failover',
        createdAt: at,
      });

      assert.equal((await readOnly.messages.get(stored.id))?.content, 'before the failover');
      const message = {
        id: uuidv7(),
        room: 'general',
        author: 'bob',
        content: 'no',
        createdAt: at,
      };
      await assert.rejects(readOnly.messages.create(message), assertUnavailable);
      // Creates in one turn share a batch: each of them gets the 503.
      const both = await Promise.allSettled(
        [uuidv7(), uuidv7()].map((id) => readOnly.messages.create({ ...message, id })),
      );
      for (const outcome of both) {
        assert.equal(outcome.status, 'rejected');
        assertUnavailable((outcome as PromiseRejectedResult).reason);
      }
      await assert.rejects(
        readOnly.rooms.put('team', 'ada', 'ada', at, () => ({ visibility: 'private', topic: '' })),
        assertUnavailable,
      );
      assert.equal(await writable.messages.get(message.id), undefined);
    } finally {
      await readOnly.close();
      await writable.close();
      await db.cleanup();
    }
  });

  it(
    'creates still queued when their store timeout runs out are answered 503 and never sent',
    { skip },
    async () => {
      const db = await postgresEngine.createDatabase();
      const store = createStore(
        defaultConfig({ databaseUrl: db.url, logLevel: 'silent', storeTimeoutMs: 500 }),
        silent,
      );
      const holder = new pg.Client({ connectionString: PG_BASE_URL });
      await holder.connect();
      try {
        await store.migrate();
        const schema = new URL(db.url).searchParams.get('schema')!;
        // The change log's lock, as a write holding it before its commit: the batch in flight waits.
        await holder.query('SELECT pg_advisory_lock(hashtext($1))', [`${schema}.changes`]);
        const create = (n: number) =>
          store.messages.create({
            id: uuidv7(),
            room: 'general',
            author: 'ada',
            content: `create ${n}`,
            createdAt: '2026-11-25T10:00:00.000Z',
          });
        const sent = create(0);
        sent.catch(() => undefined);
        // The first batch is under way (waiting for the lock) before the others are submitted.
        await untilBlockedBy(holder);
        const queued = await Promise.allSettled([1, 2, 3].map(create));
        for (const outcome of [...queued, ...(await Promise.allSettled([sent]))]) {
          assert.equal(outcome.status, 'rejected');
          assertUnavailable((outcome as PromiseRejectedResult).reason);
        }
        await holder.query('SELECT pg_advisory_unlock(hashtext($1))', [`${schema}.changes`]);
        // The create that was sent commits after its 503 (allowed: it happened whole); the
        // queued ones were called off. Batches go one after another: once a later create is
        // answered, every batch before it has ended.
        await create(9);
        const { rows } = await holder.query(`SELECT content FROM ${schema}.messages ORDER BY id`);
        assert.deepEqual(
          rows.map((r: { content: string }) => r.content),
          ['create 0', 'create 9'],
        );
      } finally {
        await holder.end();
        await store.close();
        await db.cleanup();
      }
    },
  );
});
