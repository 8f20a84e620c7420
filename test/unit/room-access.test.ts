/** The one access rule of rooms, and the view that event streams judge changes by. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccessView } from '../../src/domain/access-view.ts';
import type { Actor } from '../../src/domain/actor.ts';
import type { Change, ChangeKind } from '../../src/domain/change.ts';
import {
  isSelf,
  isSelfOrAdmin,
  mayManage,
  mayRead,
  mayReceive,
  readerMayRead,
  type AccessLookup,
} from '../../src/domain/room-access.ts';
import type { AccessSnapshot } from '../../src/domain/room-store.ts';

const ada: Actor = { subject: 'ada', admin: false };
const bob: Actor = { subject: 'bob', admin: false };
const root: Actor = { subject: 'root', admin: true };

test('reading: public rooms for everyone; private ones for members and admins; auth off opens all', () => {
  const cases: [Actor | null, 'public' | 'private', 'member' | 'owner' | null, boolean][] = [
    [ada, 'public', null, true],
    [ada, 'private', null, false],
    [ada, 'private', 'member', true],
    [ada, 'private', 'owner', true],
    [root, 'private', null, true],
    [null, 'private', null, true],
  ];
  for (const [actor, visibility, role, expected] of cases) {
    assert.equal(
      mayRead(actor, { visibility, role }),
      expected,
      `${actor?.subject} ${visibility} ${role}`,
    );
    // A store judging a write knows a signed-in non-admin reader by subject only.
    if (actor !== null && !actor.admin) {
      assert.equal(readerMayRead({ visibility, role }), expected, `reader ${visibility} ${role}`);
    }
  }
});

test('managing: owners and admins only (a room without owner: admins only); auth off opens all', () => {
  assert.equal(mayManage(ada, { visibility: 'public', role: 'owner' }), true);
  assert.equal(mayManage(ada, { visibility: 'public', role: 'member' }), false);
  assert.equal(mayManage(ada, { visibility: 'public', role: null }), false);
  assert.equal(mayManage(root, { visibility: 'private', role: null }), true);
  assert.equal(mayManage(null, { visibility: 'private', role: null }), true);
});

test('acting for a subject: itself; admins may read others but set only their own markers', () => {
  assert.equal(isSelfOrAdmin(ada, 'ada'), true);
  assert.equal(isSelfOrAdmin(ada, 'bob'), false);
  assert.equal(isSelfOrAdmin(root, 'bob'), true);
  assert.equal(isSelf(root, 'bob'), false);
  assert.equal(isSelf(null, 'bob'), true);
});

function change(kind: ChangeKind, room: string, extra: Partial<Change> = {}): Change {
  return { seq: 1, kind, room, data: '{}', subject: null, madePrivate: false, ...extra };
}

const lookup: AccessLookup = {
  visibility: (room) => (room.startsWith('p') ? 'private' : 'public'),
  isMember: (room, subject) => room === 'p1' && subject === 'ada',
};

test('a stream receives changes of rooms its subject may read, with the three exceptions', () => {
  const created = change('message.created', 'p1');
  assert.equal(mayReceive(ada, created, lookup), true, 'member of a private room');
  assert.equal(mayReceive(bob, created, lookup), false, 'not a member');
  assert.equal(mayReceive(root, created, lookup), true, 'admin');
  assert.equal(mayReceive(null, created, lookup), true, 'auth off');
  assert.equal(mayReceive(bob, change('message.created', 'open'), lookup), true, 'public');
  // member.removed about the subject itself always reaches it, not others of a room they cannot read
  const removed = change('member.removed', 'p2', { subject: 'bob' });
  assert.equal(mayReceive(bob, removed, lookup), true);
  assert.equal(mayReceive(ada, removed, lookup), false);
  // the room.updated that made a room private reaches everyone; a later one only readers
  assert.equal(mayReceive(bob, change('room.updated', 'p1', { madePrivate: true }), lookup), true);
  assert.equal(mayReceive(bob, change('room.updated', 'p1'), lookup), false);
  // markers only to their subject, even in a public room and even for admins
  const marker = change('read-marker.updated', 'open', { subject: 'ada' });
  assert.equal(mayReceive(ada, marker, lookup), true);
  assert.equal(mayReceive(bob, marker, lookup), false);
  assert.equal(mayReceive(root, marker, lookup), false);
  // ...and to its subject only while it may read the room (not after it was removed)
  const lost = change('read-marker.updated', 'p2', { subject: 'bob' });
  assert.equal(mayReceive(bob, lost, lookup), false);
  assert.equal(
    mayReceive(ada, change('read-marker.updated', 'p1', { subject: 'ada' }), lookup),
    true,
  );
});

test('the access view loads a snapshot and follows the changes after it, in order', async () => {
  const snapshot: AccessSnapshot = {
    latestSeq: 5,
    privateRooms: ['secret'],
    memberships: [['secret', 'ada']],
  };
  const view = new AccessView({ accessSnapshot: async () => snapshot });
  await view.load();
  assert.equal(view.visibility('secret'), 'private');
  assert.equal(view.visibility('anything'), 'public');
  assert.equal(view.isMember('secret', 'ada'), true);
  view.apply([
    change('member.added', 'secret', { seq: 6, subject: 'bob' }),
    change('member.removed', 'secret', { seq: 7, subject: 'ada' }),
    change('room.created', 'hidden', { seq: 8, data: '{"visibility":"private"}' }),
    change('room.updated', 'secret', { seq: 9, data: '{"visibility":"public"}' }),
  ]);
  assert.equal(view.isMember('secret', 'bob'), true);
  assert.equal(view.isMember('secret', 'ada'), false);
  assert.equal(view.visibility('hidden'), 'private');
  assert.equal(view.visibility('secret'), 'public');
});

test('the access view skips the changes its snapshot already holds (an older one would undo a newer)', async () => {
  // The snapshot was read after ada was added (seq 3) and removed (seq 4), and after the room
  // was made private (seq 5); the feed, which started at seq 2, hands those out again.
  const view = new AccessView({
    accessSnapshot: async () => ({ latestSeq: 5, privateRooms: ['secret'], memberships: [] }),
  });
  await view.load();
  view.apply([
    change('member.added', 'secret', { seq: 3, subject: 'ada' }),
    change('room.updated', 'secret', { seq: 4, data: '{"visibility":"public"}' }),
  ]);
  assert.equal(view.isMember('secret', 'ada'), false, 'a removal the snapshot holds stays');
  assert.equal(view.visibility('secret'), 'private', 'a visibility the snapshot holds stays');
  view.apply([change('member.added', 'secret', { seq: 6, subject: 'ada' })]);
  assert.equal(view.isMember('secret', 'ada'), true, 'a change after the snapshot applies');
});
