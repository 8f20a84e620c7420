/**
 * The settings of the service's PostgreSQL connections, on a real server:
 * generic plans, and no JIT compilation. A generic plan is costed without
 * its LIMIT, so on a large table a batch of room pages came out above
 * jit_above_cost and was compiled with LLVM at every execution (about 5 ms
 * for 20 pages that then ran in 1, on 1M messages).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { listFilter } from '../../src/domain/list-filter.ts';
import type { ListQuery } from '../../src/domain/message.ts';
import { listBatchSql, listParameters } from '../../src/store/postgres/list-sql.ts';
import { connectionConfig } from '../../src/store/postgres/postgres-store.ts';
import { postgresEngine, skipUnlessEngine, type TestDatabase } from '../support/engines.ts';
import { migratedDatabase } from '../support/open-store.ts';

const skip = await skipUnlessEngine(postgresEngine);

describe("the service's PostgreSQL sessions", { skip }, () => {
  let db: TestDatabase;
  let client: pg.Client;

  before(async () => {
    db = await migratedDatabase(postgresEngine);
    // A connection as the service's pool makes them.
    client = new pg.Client(connectionConfig(db.url, 1, 10_000));
    await client.connect();
  });

  after(async () => {
    await client?.end();
    await db?.cleanup();
  });

  it('plan generically and never JIT-compile', async () => {
    const setting = async (name: string) =>
      (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name];
    assert.equal(await setting('plan_cache_mode'), 'force_generic_plan');
    assert.equal(await setting('jit'), 'off');
  });

  it('a batch of room pages runs without JIT even when its estimate is over any threshold', async () => {
    // Every plan would be compiled at this threshold, were JIT on (and the server built with it).
    await client.query('SET jit_above_cost = 0');
    const queries: (ListQuery & { limit: number })[] = ['general', 'room-2'].map((room) => ({
      order: 'desc',
      limit: 50,
      room,
      before: '01a20f9c-5499-7b7a-be43-70c677bb0710',
    }));
    const filter = listFilter(queries[0]!);
    const per = queries.map((q) => listParameters(filter, q));
    const arrays = per[0]!.map((_, i) => per.map((values) => values[i]));
    const { rows } = await client.query<{ 'QUERY PLAN': Record<string, unknown>[] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${listBatchSql(filter).text}`,
      arrays,
    );
    const explained = rows[0]!['QUERY PLAN'][0]!;
    assert.ok(explained.Plan !== undefined, JSON.stringify(explained));
    assert.equal(explained.JIT, undefined, JSON.stringify(explained.JIT));
  });
});
