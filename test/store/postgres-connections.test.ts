/**
 * A statement PostgreSQL refuses (a reply to no message, a private room, a
 * duplicate) leaves its connection in the pool: the next statement does not
 * pay for a new connection, its statements prepared and its functions
 * compiled again. Watched on a database of its own, so every backend on it
 * is the store's.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { defaultConfig } from '../../src/config.ts';
import { ErrorKinds, isAppError } from '../../src/errors.ts';
import { createStore } from '../../src/store/create-store.ts';
import { postgresEngine, skipUnlessEngine } from '../support/engines.ts';
import { PG_BASE_URL } from '../support/prerequisites.ts';
import { silent } from '../support/open-store.ts';

describe('PostgreSQL connections', async () => {
  const skip = await skipUnlessEngine(postgresEngine);

  it('a statement the database refuses keeps its connection', { skip }, async () => {
    const name = `t_conn_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_BASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(PG_BASE_URL);
    url.pathname = `/${name}`;
    // One pooled connection: every statement goes through it.
    const store = createStore(
      defaultConfig({ databaseUrl: url.toString(), logLevel: 'silent', pgPoolSize: 1 }),
      silent,
    );
    const backends = async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'
         ORDER BY pid`,
        [name],
      );
      return rows.map((r) => r.pid);
    };
    try {
      await store.migrate();
      const message = (replyTo?: string) => ({
        id: uuidv7(),
        room: 'general',
        author: 'ada',
        content: 'hello',
        createdAt: '2026-11-25T10:00:00.000Z',
        ...(replyTo === undefined ? {} : { replyTo }),
      });
      const first = await store.messages.create(message());
      const before = await backends();
      assert.ok(before.length > 0);
      for (let i = 0; i < 5; i += 1) {
        await assert.rejects(
          store.messages.create(message(uuidv7())),
          (error: unknown) => isAppError(error) && error.kind === ErrorKinds.validation,
        );
        // A duplicate id: the database's own unique violation.
        await assert.rejects(store.messages.create({ ...message(), id: first.id }));
      }
      await store.messages.create(message(first.id));
      assert.deepEqual(await backends(), before, 'no connection was closed and opened again');
    } finally {
      await store.close();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
