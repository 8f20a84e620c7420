/** The list filter: one engine-neutral description per query shape, values in condition order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listFilter, listValues } from '../../src/domain/list-filter.ts';

test('queries of one shape share one filter; another shape has another', () => {
  const a = listFilter({ order: 'asc', room: 'x', after: 'a' });
  assert.equal(listFilter({ order: 'asc', room: 'y', after: 'b', limit: 5 }), a);
  assert.notEqual(listFilter({ order: 'desc', room: 'x', after: 'a' }), a);
  assert.notEqual(listFilter({ order: 'asc', room: 'x' }), a);
});

test('a room without an id list is one range of the (room, id) key; with one, plain conditions', () => {
  const range = listFilter({ order: 'desc', room: 'r', before: 'b' });
  assert.deepEqual(range.conditions, [{ kind: 'room-range', after: false, before: true }]);
  assert.equal(range.walk, 'room-id');
  assert.equal(range.name, 'list-rb-desc');
  const byIds = listFilter({ order: 'asc', room: 'r', after: 'a', ids: ['i'] });
  assert.deepEqual(
    byIds.conditions.map((c) => c.kind),
    ['room', 'after', 'ids'],
  );
  assert.equal(byIds.walk, 'ids');
  assert.equal(listFilter({ order: 'asc', after: 'a' }).walk, 'id');
  assert.deepEqual(listFilter({ order: 'asc' }).conditions, []);
});

test('values come in the order of the conditions; an id list as the engine encodes it', () => {
  const query = { order: 'asc', room: 'r', after: 'a', before: 'b' } as const;
  assert.deepEqual(listValues(listFilter(query), query), ['r', 'a', 'b']);
  const byIds = { order: 'asc', room: 'r', before: 'b', ids: ['x', 'y'] } as const;
  assert.deepEqual(listValues(listFilter(byIds), byIds, { ids: JSON.stringify }), [
    'r',
    'b',
    '["x","y"]',
  ]);
});

test('a reader adds the readable condition last, with its subject as the value, as a shape of its own', () => {
  const query = { order: 'desc', before: 'b', readableBy: 'ada' } as const;
  const filter = listFilter(query);
  assert.deepEqual(
    filter.conditions.map((c) => c.kind),
    ['before', 'readable'],
  );
  assert.equal(filter.name, 'list-bp-desc');
  assert.notEqual(filter, listFilter({ order: 'desc', before: 'b' }));
  assert.deepEqual(listValues(filter, query), ['b', 'ada']);
});
