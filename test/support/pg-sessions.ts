/**
 * Raw PostgreSQL sessions beside a store under test: one in the store's
 * schema, to hold locks or transactions open, and a wait for the moment
 * another session is blocked by it.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { PG_BASE_URL } from './prerequisites.ts';

/** A raw client in the schema of a store's URL (`?schema=`). */
export async function schemaClient(storeUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_BASE_URL });
  await client.connect();
  await client.query(`SET search_path = ${new URL(storeUrl).searchParams.get('schema')!}`);
  return client;
}

/** Resolves once some session waits for a lock `holder` holds (asked of the lock manager, live). */
export async function untilBlockedBy(holder: pg.Client): Promise<void> {
  const { rows } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const pid = rows[0]!.pid;
  for (let asked = 0; asked < 10_000; asked += 1) {
    const blocked = await holder.query<{ waiting: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND $1 = ANY(pg_blocking_pids(pid))) AS waiting',
      [pid],
    );
    if (blocked.rows[0]!.waiting) return;
  }
  assert.fail('no session came to wait for a lock the holder holds');
}
