/** MemberRoomsMemo: a subject's memberships kept until a change with a later seq moves them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Change, ChangeKind } from '../../src/domain/change.ts';
import { MemberRoomsMemo } from '../../src/domain/member-rooms-memo.ts';
import type { MemberRooms } from '../../src/domain/room-store.ts';
import { aRoom } from '../support/room-fixtures.ts';

/** The subject's memberships in `rooms`, as a store snapshot at `seq` would hand them out. */
const snapshot = (seq: number, ...rooms: string[]): MemberRooms => ({
  seq,
  rooms: rooms.map((name) => ({ room: aRoom(name), role: 'member', lastRead: null })),
});

const change = (seq: number, kind: ChangeKind, room: string, subject: string | null): Change => ({
  seq,
  kind,
  room,
  subject,
  data: '{}',
  madePrivate: false,
});

/** A memo loaded at head `head`, whose feed has since handed it every change up to `through`. */
async function loaded(head: number, through = head): Promise<MemberRoomsMemo> {
  const memo = new MemberRoomsMemo(() => head);
  await memo.load();
  if (through > head) memo.apply([change(through, 'message.created', 'elsewhere', null)]);
  return memo;
}

describe('MemberRoomsMemo', () => {
  it('hands back what it kept while nothing moved it, messages included', async () => {
    const memo = await loaded(10);
    const mine = snapshot(10, 'a', 'b');
    memo.keep('ada', mine);
    memo.apply([change(11, 'message.created', 'a', null), change(12, 'reaction.added', 'a', null)]);
    assert.equal(memo.rooms('ada', 12), mine.rooms);
    assert.equal(memo.rooms('bob', 12), undefined, 'nothing kept for bob');
  });

  for (const kind of [
    'member.added',
    'member.updated',
    'member.removed',
    'read-marker.updated',
  ] as const) {
    it(`${kind} of the subject after the snapshot drops its entry; of another subject, not`, async () => {
      const memo = await loaded(10);
      memo.keep('ada', snapshot(10, 'a'));
      memo.keep('bob', snapshot(10, 'a'));
      memo.apply([change(11, kind, 'a', 'bob')]);
      assert.notEqual(memo.rooms('ada', 11), undefined);
      assert.equal(memo.rooms('bob', 11), undefined);
    });
  }

  for (const kind of ['room.created', 'room.updated'] as const) {
    it(`${kind} drops the entries of the room's members only`, async () => {
      const memo = await loaded(10);
      memo.keep('ada', snapshot(10, 'a', 'b'));
      memo.keep('bob', snapshot(10, 'c'));
      memo.apply([change(11, kind, 'b', null)]);
      assert.equal(memo.rooms('ada', 11), undefined);
      assert.notEqual(memo.rooms('bob', 11), undefined);
    });
  }

  it('a change already in the snapshot (seq at or below it) does not drop it, whenever it arrives', async () => {
    const memo = await loaded(10);
    const mine = snapshot(12, 'a');
    memo.keep('ada', mine);
    memo.apply([
      change(11, 'read-marker.updated', 'a', 'ada'),
      change(12, 'room.updated', 'a', null),
    ]);
    assert.equal(memo.rooms('ada', 12), mine.rooms);
  });

  it('answers nothing for a seq it has not been handed every change up to', async () => {
    const memo = await loaded(10);
    memo.keep('ada', snapshot(10, 'a'));
    assert.equal(memo.rooms('ada', 11), undefined, 'seq 11 may move ada: not seen yet');
    memo.apply([change(11, 'message.created', 'a', null)]);
    assert.notEqual(memo.rooms('ada', 11), undefined);
  });

  it('keeps no snapshot older than its load (it never saw the changes between)', async () => {
    const memo = await loaded(10);
    memo.keep('ada', snapshot(9, 'a'));
    assert.equal(memo.rooms('ada', 10), undefined);
    memo.keep('ada', snapshot(10, 'a'));
    assert.notEqual(memo.rooms('ada', 10), undefined);
  });

  it('a newer snapshot is not replaced by an older one read meanwhile', async () => {
    const memo = await loaded(10, 12);
    const newer = snapshot(12, 'b');
    memo.keep('ada', newer);
    memo.keep('ada', snapshot(11, 'a'));
    assert.equal(memo.rooms('ada', 12), newer.rooms);
  });

  it('reset: nothing kept nor answered until loaded again, then only snapshots from the new head', async () => {
    let head = 10;
    const memo = new MemberRoomsMemo(() => head);
    await memo.load();
    memo.keep('ada', snapshot(10, 'a'));
    memo.reset();
    assert.equal(memo.rooms('ada', 10), undefined);
    memo.keep('ada', snapshot(10, 'a'));
    assert.equal(memo.rooms('ada', 10), undefined, 'not loaded: keeps nothing');
    head = 20;
    await memo.load();
    memo.keep('ada', snapshot(15, 'a'));
    assert.equal(memo.rooms('ada', 20), undefined, 'changes 16-20 were never applied here');
    memo.keep('ada', snapshot(20, 'a'));
    assert.notEqual(memo.rooms('ada', 20), undefined);
  });

  it('keeps at most 2,000 subjects, dropping the least recently listed', async () => {
    const memo = await loaded(10);
    for (let i = 0; i < 2000; i++) memo.keep(`s${i}`, snapshot(10, 'a'));
    assert.notEqual(memo.rooms('s0', 10), undefined, 's0 listed: now the most recent');
    memo.keep('one-more', snapshot(10, 'a'));
    assert.notEqual(memo.rooms('s0', 10), undefined);
    assert.equal(memo.rooms('s1', 10), undefined, 's1 was the least recently listed');
    assert.notEqual(memo.rooms('one-more', 10), undefined);
  });

  it('keeps at most 400,000 memberships in all, and no subject in more than 40,000 rooms', async () => {
    const memo = await loaded(10);
    const many = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);
    memo.keep('huge', snapshot(10, ...many(40_001)));
    assert.equal(memo.rooms('huge', 10), undefined, 'more than a tenth of the cap: not kept');
    for (let i = 0; i < 10; i++) memo.keep(`s${i}`, snapshot(10, ...many(40_000)));
    assert.deepEqual(memo.size, { subjects: 10, memberships: 400_000 });
    memo.keep('one-more', snapshot(10, 'a'));
    assert.deepEqual(memo.size, { subjects: 10, memberships: 360_001 });
    assert.equal(memo.rooms('s0', 10), undefined, 'the least recently listed went to make room');
    assert.notEqual(memo.rooms('s1', 10), undefined);
  });

  it('past 50,000 remembered changes it lets go of those older than every entry kept, and keeps the entries', async () => {
    const memo = await loaded(0);
    const changes = Array.from({ length: 50_001 }, (_, i) =>
      change(i + 1, 'read-marker.updated', 'z', `s${i}`),
    );
    memo.keep('ada', snapshot(0, 'a'));
    memo.apply(changes.slice(0, 50_000));
    memo.keep('ada', snapshot(50_000, 'a')); // read again after those changes
    memo.keep('s49999', snapshot(40_000, 'z'));
    assert.equal(memo.rooms('s49999', 50_000), undefined, 'moved at 50,000');
    memo.apply(changes.slice(50_000)); // s50000 at 50,001: past the limit
    assert.notEqual(memo.rooms('ada', 50_001), undefined, 'ada was read after all of them');
    memo.keep('bob', snapshot(49_999, 'a'));
    assert.equal(memo.rooms('bob', 50_001), undefined, 'older than what was let go: not kept');
    memo.apply([change(50_002, 'member.updated', 'a', 'ada')]);
    assert.equal(memo.rooms('ada', 50_002), undefined, 'changes after the letting go still count');
  });

  it('past 50,000 remembered changes, with an entry older than all of them kept, it forgets everything', async () => {
    const memo = await loaded(0);
    memo.keep('ada', snapshot(0, 'a'));
    const changes = Array.from({ length: 50_001 }, (_, i) =>
      change(i + 1, 'read-marker.updated', 'z', `s${i}`),
    );
    memo.apply(changes);
    assert.equal(memo.rooms('ada', 50_001), undefined, 'ada was not changed, but forgotten');
    memo.keep('ada', snapshot(50_000, 'a'));
    assert.equal(memo.rooms('ada', 50_001), undefined, 'older than the forgetting');
    memo.keep('ada', snapshot(50_001, 'a'));
    assert.notEqual(memo.rooms('ada', 50_001), undefined);
  });
});
