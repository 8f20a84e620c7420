/** ReadBatcher: PostgreSQL gets by id of one turn of the event loop share one query. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReadBatcher } from '../../src/store/postgres/read-batcher.ts';

interface Row {
  readonly id: string;
  readonly n: number;
}

test('gets of one turn share one fetch (ids once each); each caller gets its own row', async () => {
  const fetches: string[][] = [];
  const stored: Row[] = [
    { id: 'a', n: 1 },
    { id: 'b', n: 2 },
  ];
  const batcher = new ReadBatcher<Row>(async (ids) => {
    fetches.push([...ids]);
    return stored.filter((r) => ids.includes(r.id));
  });
  const rows = await Promise.all(['b', 'a', 'x', 'b'].map((id) => batcher.get(id)));
  assert.deepEqual(rows, [stored[1], stored[0], undefined, stored[1]]);
  assert.deepEqual(fetches, [['b', 'a', 'x']]);
  assert.equal((await batcher.get('a'))?.n, 1);
  assert.deepEqual(fetches.at(-1), ['a']);
});

test('with batching off each get is a fetch of its own, sent at once', async () => {
  const fetches: string[][] = [];
  const batcher = new ReadBatcher<Row>(async (ids) => {
    fetches.push([...ids]);
    return ids.filter((id) => id !== 'x').map((id) => ({ id, n: id.length }));
  }, false);
  const gets = ['b', 'a', 'x'].map((id) => batcher.get(id));
  assert.deepEqual(fetches, [['b'], ['a'], ['x']]);
  assert.deepEqual(await Promise.all(gets), [{ id: 'b', n: 1 }, { id: 'a', n: 1 }, undefined]);
});

test('a failed fetch fails every get of its batch, and the next turn fetches again', async () => {
  let fail = true;
  const down = new Error('store unavailable');
  const batcher = new ReadBatcher<Row>(async (ids) => {
    if (fail) throw down;
    return ids.map((id) => ({ id, n: 0 }));
  });
  const outcomes = await Promise.allSettled(['a', 'b'].map((id) => batcher.get(id)));
  for (const o of outcomes) assert.equal((o as PromiseRejectedResult).reason, down);
  fail = false;
  assert.deepEqual(await batcher.get('c'), { id: 'c', n: 0 });
});
