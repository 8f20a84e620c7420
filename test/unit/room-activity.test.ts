/**
 * The rooms' windows between a load and the feed: changes the feed handed out
 * after the load's snapshot but before the window existed are read from the
 * log; changes that arrive while that gap is read wait, in order, and nothing
 * is applied twice. (The store-backed behaviour is in the room store contract.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Change } from '../../src/domain/change.ts';
import type { RecentMessages } from '../../src/domain/message-store.ts';
import { RoomActivity, type ActivitySource } from '../../src/domain/room-activity.ts';
import type { LastMessage } from '../../src/domain/room.ts';

const idOf = (n: number) => `01900000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
const message = (n: number, author = 'bob'): LastMessage => ({
  id: idOf(n),
  author,
  createdAt: new Date(Date.UTC(2026, 10, 23, 0, 0, 0, n)).toISOString(),
});
const change = (seq: number, kind: Change['kind'], m: LastMessage, room = 'r'): Change => ({
  seq,
  kind,
  room,
  data: JSON.stringify({ ...m, room }),
  subject: null,
  madePrivate: false,
});

/** A log in memory and a feed head that the test moves by hand. */
class FakeSource implements ActivitySource {
  head = 0;
  log: Change[] = [];
  snapshot: RecentMessages = { seq: 0, rooms: new Map() };
  /** Lets a test act while a read of the gap is under way. */
  duringGapRead: (() => void) | undefined;

  async recent(_rooms: readonly string[], _perRoom: number): Promise<RecentMessages> {
    return this.snapshot;
  }

  async changesSince(after: number, limit: number): Promise<Change[]> {
    const found = this.log.filter((c) => c.seq > after).slice(0, limit);
    const act = this.duringGapRead;
    this.duringGapRead = undefined;
    act?.();
    return found;
  }
}

describe('RoomActivity', () => {
  it('reads the gap between its load and the feed, and holds back the feed until it has', async () => {
    const source = new FakeSource();
    const activity = new RoomActivity(source);
    // The snapshot was at seq 2 (messages 1 and 2); the feed has handed out up to 5 already.
    source.snapshot = { seq: 2, rooms: new Map([['r', [message(2), message(1)]]]) };
    source.log = [
      change(1, 'message.created', message(1)),
      change(2, 'message.created', message(2)),
      change(3, 'message.created', message(3)),
      change(4, 'message.deleted', message(2)),
      change(5, 'message.created', message(5, 'ada')),
    ];
    source.head = 5;
    // While the gap is read, the feed hands out 6 and 7: they wait, then apply in order.
    source.duringGapRead = () => {
      activity.apply([
        change(6, 'message.created', message(6)),
        change(7, 'message.deleted', message(6)),
      ]);
    };
    const windows = await activity.windows(['r']);
    const window = windows.get('r')!;
    assert.deepEqual(window.newest(), message(5, 'ada'));
    assert.deepEqual(
      window.entries.map((e) => e.id),
      [idOf(1), idOf(3), idOf(5)],
    );
    // Not complete? The room had fewer than a window's worth: it is, and counts from the start.
    assert.equal(window.unread('ada', null), 2);
    assert.equal(window.unread('ada', idOf(1)), 1);
    // A replay of what it holds changes nothing; a later change applies.
    activity.apply(source.log);
    activity.apply([change(8, 'message.created', message(8))]);
    assert.deepEqual(
      window.entries.map((e) => e.id),
      [idOf(1), idOf(3), idOf(5), idOf(8)],
    );
  });

  it('a window that lost every message it held is loaded again; a failed load is not kept', async () => {
    const source = new FakeSource();
    const activity = new RoomActivity(source);
    const full = Array.from({ length: 128 }, (_, i) => message(1000 - i));
    source.snapshot = { seq: 1, rooms: new Map([['r', full]]) };
    source.head = 1;
    const first = (await activity.windows(['r'])).get('r')!;
    // Not the whole room: a marker older than the window cannot be counted from it.
    assert.equal(first.unread('ada', idOf(1)), 100);
    assert.equal(first.unread('ada', idOf(900)), 100);
    assert.equal(first.unread('bob', idOf(1)), undefined);
    let seq = 1;
    activity.apply(full.map((m) => change(++seq, 'message.deleted', m)));
    assert.equal(first.newest(), undefined);
    source.snapshot = { seq, rooms: new Map([['r', [message(5)]]]) };
    source.head = seq;
    const again = (await activity.windows(['r'])).get('r')!;
    assert.notEqual(again, first);
    assert.deepEqual(again.newest(), message(5));

    source.snapshot = { seq, rooms: new Map() };
    source.head = seq + 1;
    source.changesSince = async () => {
      throw new Error('log unavailable');
    };
    await assert.rejects(activity.windows(['other']), /log unavailable/);
    source.changesSince = async () => [];
    source.head = seq;
    const after = (await activity.windows(['other'])).get('other')!;
    assert.equal(after.newest(), null);
  });
});

describe('RoomActivity reset while a window loads', () => {
  it('drops the window being loaded: the request loads it again and answers from that', async () => {
    const source = new FakeSource();
    const activity = new RoomActivity(source);
    source.snapshot = { seq: 2, rooms: new Map([['r', [message(2), message(1)]]]) };
    source.log = [
      change(1, 'message.created', message(1)),
      change(2, 'message.created', message(2)),
      change(3, 'message.created', message(3)),
    ];
    source.head = 3;
    // While the gap is read the feed hands out 4 and 5, but its apply fails after 4: reset.
    source.duringGapRead = () => {
      source.log.push(change(4, 'message.created', message(4)));
      source.log.push(change(5, 'message.created', message(5)));
      source.head = 5;
      activity.apply([source.log[3]!]);
      activity.reset();
      source.snapshot = { seq: 5, rooms: new Map([['r', [5, 4, 3, 2, 1].map((n) => message(n))]]) };
    };
    const window = (await activity.windows(['r'])).get('r')!;
    assert.deepEqual(window.newest(), message(5));
    assert.deepEqual(
      window.entries.map((e) => e.id),
      [1, 2, 3, 4, 5].map(idOf),
    );
  });

  it('a request whose windows are reset during every load fails rather than answer from them', async () => {
    const source = new FakeSource();
    const activity = new RoomActivity(source);
    source.log = [change(1, 'message.created', message(1))];
    source.head = 1;
    let loads = 0;
    source.changesSince = async (after, limit) => {
      loads += 1;
      activity.reset();
      return source.log.filter((c) => c.seq > after).slice(0, limit);
    };
    await assert.rejects(activity.windows(['r']), /reset during each of their loads/);
    // The first load and three more.
    assert.equal(loads, 4);
  });
});

describe('RoomActivity keeps a bounded number of windows', () => {
  it('past 2,000 rooms the least recently asked for is forgotten and read again', async () => {
    const source = new FakeSource();
    const asked: string[][] = [];
    source.recent = async (rooms: readonly string[]) => {
      asked.push([...rooms]);
      return { seq: 0, rooms: new Map() };
    };
    const activity = new RoomActivity(source);
    const rooms = Array.from({ length: 2001 }, (_, i) => `room-${i}`);
    await activity.windows(rooms.slice(0, 2000));
    // Asked again: now the most recently used, so room-1 is the oldest.
    await activity.windows(['room-0']);
    assert.equal(asked.length, 1, 'room-0 was kept');
    await activity.windows([rooms[2000]!]);
    await activity.windows(['room-0']);
    assert.equal(asked.length, 2, 'room-0 still kept after one more room');
    await activity.windows(['room-1']);
    assert.deepEqual(asked.at(-1), ['room-1'], 'room-1 was forgotten and read again');
  });
});
