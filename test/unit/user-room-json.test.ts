import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LastMessage, UserRoom } from '../../src/domain/room.ts';
import { UserRoomJson } from '../../src/http/user-room-json.ts';
import { aRoom } from '../support/room-fixtures.ts';

function entry(name: string, over: Partial<UserRoom> = {}): UserRoom {
  return {
    ...aRoom(name),
    role: 'member',
    lastMessage: null,
    lastRead: null,
    unread: 0,
    ...over,
  };
}

const message = (id: string, author: string): LastMessage => ({
  id,
  author,
  createdAt: '2026-11-02T00:00:00.000Z',
});

describe('UserRoomJson', () => {
  it('writes what JSON.stringify writes, whatever the fields hold', () => {
    const json = new UserRoomJson();
    const rooms = [
      entry('general'),
      entry('private-1', {
        visibility: 'private',
        topic: 'quotes " and \\ backslashes, a tab\t, a line\n, \u0001, \u2028 and 🎉👩‍👩‍👧',
        createdBy: 'ann "the admin" 😀',
        version: 7,
        role: 'owner',
        lastMessage: message('01a20b40-e183-7d1f-8305-7751e3011235', 'bob\u0007 "b" ✓'),
        lastRead: '01a20b40-e183-7d1f-8305-7751e3011235',
        unread: 100,
      }),
      entry('room-3', { lastRead: '01a20b3d-10f3-7390-944e-bfe39bff6eec', unread: 12 }),
    ];
    assert.equal(json.list(rooms), JSON.stringify(rooms));
    assert.equal(json.list([]), '[]');
    assert.equal(json.list(rooms.slice(1, 2)), JSON.stringify(rooms.slice(1, 2)));
  });

  it('writes a room again once its version moved, and a newest message once another took its place', () => {
    const json = new UserRoomJson();
    const first = message('01a20b40-0000-7000-8000-000000000001', 'ann');
    const before = [entry('team', { topic: 'old', lastMessage: first })];
    assert.equal(json.list(before), JSON.stringify(before));
    const second = message('01a20b40-0000-7000-8000-000000000002', 'bob');
    const after = [entry('team', { topic: 'new', version: 2, lastMessage: second })];
    assert.equal(json.list(after), JSON.stringify(after));
    // The same version again is the same room: its kept text is used (and is still right).
    assert.equal(json.list(after), JSON.stringify(after));
  });
});
