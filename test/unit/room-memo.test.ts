/** RoomMemo: rooms by name and version, and a list's misses read once. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RoomMemo } from '../../src/domain/room-memo.ts';
import { aRoom } from '../support/room-fixtures.ts';

const room = (name: string, version: number) =>
  aRoom(name, { topic: `v${version}`, updatedAt: `2026-11-01T00:00:0${version}.000Z`, version });

describe('RoomMemo', () => {
  it('answers a room only at the version it holds', () => {
    const memo = new RoomMemo();
    memo.keep(room('a', 1));
    assert.deepEqual(memo.get('a', 1), room('a', 1));
    assert.equal(memo.get('a', 2), undefined);
    assert.equal(memo.get('b', 1), undefined);
  });

  it('reads only the misses, in one call, and keeps them', async () => {
    const memo = new RoomMemo();
    memo.keep(room('a', 1));
    const asked: string[][] = [];
    const read = async (names: string[]) => {
      asked.push(names);
      return names.map((n) => room(n, 1));
    };
    assert.deepEqual(
      await memo.resolve(
        [
          ['a', 1],
          ['b', 1],
        ],
        read,
      ),
      [room('a', 1), room('b', 1)],
    );
    assert.deepEqual(asked, [['b']]);
    assert.deepEqual(
      await memo.resolve(
        [
          ['b', 1],
          ['a', 1],
        ],
        read,
      ),
      [room('b', 1), room('a', 1)],
    );
    assert.equal(asked.length, 1, 'all held: nothing read');
  });

  it('keeps the rooms it found when another list replaces them, or the memo starts again, during the read', async () => {
    const memo = new RoomMemo();
    memo.keep(room('a', 1));
    const replaced = await memo.resolve(
      [
        ['a', 1],
        ['b', 1],
      ],
      async (names) => {
        memo.keep(room('a', 2)); // another list, later, read a newer a
        return names.map((n) => room(n, 1));
      },
    );
    assert.deepEqual(replaced, [room('a', 1), room('b', 1)]);
    // Filled to its bound by another list meanwhile: it starts again, and what this list
    // found before the read still answers.
    const full = new RoomMemo();
    full.keep(room('a', 1));
    const kept = await full.resolve(
      [
        ['a', 1],
        ['c', 1],
      ],
      async (names) => {
        for (let i = 0; i < 20_000; i++) full.keep(room(`filler-${i}`, 1));
        return names.map((n) => room(n, 1));
      },
    );
    assert.deepEqual(kept, [room('a', 1), room('c', 1)]);
  });

  it('takes a newer state than listed for a room it had to read', async () => {
    const memo = new RoomMemo();
    const found = await memo.resolve([['a', 1]], async () => [room('a', 3)]);
    assert.deepEqual(found, [room('a', 3)]);
    assert.deepEqual(memo.get('a', 3), room('a', 3));
  });
});
