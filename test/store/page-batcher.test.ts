/** PageBatcher: PostgreSQL list pages of one shape asked for in one turn share one statement. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listFilter } from '../../src/domain/list-filter.ts';
import { PageBatcher, type PageRow } from '../../src/store/postgres/page-batcher.ts';

const history = listFilter({ order: 'desc', before: 'x', limit: 50 });
const roomPage = listFilter({ order: 'asc', room: 'r', limit: 50 });
const row = (json: string): PageRow => ({ latest: '7', count: 1, json });

function recording(batching: boolean) {
  const calls: string[] = [];
  const batcher = new PageBatcher({
    batching,
    one: async (filter, values) => {
      calls.push(`one ${filter.name} ${values.join(',')}`);
      return row(`${values[0]}`);
    },
    many: async (filter, values) => {
      calls.push(`many ${filter.name} ${values.map((v) => v[0]).join(',')}`);
      // Answered in any order: each row names its query's place.
      return values.map((v, i) => ({ ...row(`${v[0]}`), n: String(i + 1) })).reverse();
    },
  });
  return { calls, batcher };
}

test('pages of one shape in one turn share one statement; each caller gets its own page', async () => {
  const { calls, batcher } = recording(true);
  const pages = await Promise.all([
    batcher.page(history, ['a', 51]),
    batcher.page(roomPage, ['r', 51]),
    batcher.page(history, ['b', 51]),
    batcher.page(history, ['c', 51]),
  ]);
  assert.deepEqual(
    pages.map((p) => p.json),
    ['a', 'r', 'b', 'c'],
  );
  assert.deepEqual(calls, [`many ${history.name} a,b,c`, `one ${roomPage.name} r,51`]);
});

test('with batching off each page is a query of its own, sent at once', async () => {
  const { calls, batcher } = recording(false);
  const pages = [batcher.page(history, ['a', 51]), batcher.page(history, ['b', 51])];
  assert.deepEqual(calls, [`one ${history.name} a,51`, `one ${history.name} b,51`]);
  assert.deepEqual(
    (await Promise.all(pages)).map((p) => p.json),
    ['a', 'b'],
  );
});

test('a failed statement fails every page of its batch, and the next turn asks again', async () => {
  const down = new Error('store unavailable');
  let fail = true;
  const batcher = new PageBatcher({
    batching: true,
    one: async () => row('one'),
    many: async (_filter, values) => {
      if (fail) throw down;
      return values.map((_, i) => ({ ...row('many'), n: String(i + 1) }));
    },
  });
  const outcomes = await Promise.allSettled([
    batcher.page(history, ['a', 51]),
    batcher.page(history, ['b', 51]),
  ]);
  for (const o of outcomes) assert.equal((o as PromiseRejectedResult).reason, down);
  fail = false;
  const again = await Promise.all([
    batcher.page(history, ['a', 51]),
    batcher.page(history, ['b', 51]),
  ]);
  assert.deepEqual(
    again.map((p) => p.json),
    ['many', 'many'],
  );
});
