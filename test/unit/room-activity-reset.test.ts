/**
 * RoomActivity after a batch it failed to apply (part of it reached its
 * windows): reset by the feed, it answers as a fresh RoomActivity over the same
 * store would, and as the store itself does. The store is a real SQLite one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { Change } from '../../src/domain/change.ts';
import { ChangeFeed } from '../../src/domain/change-feed.ts';
import type { Message } from '../../src/domain/message.ts';
import type { ChangeLog } from '../../src/domain/change-log.ts';
import {
  feedWithActivity,
  RoomActivity,
  WINDOW_SIZE,
  type ActivitySource,
} from '../../src/domain/room-activity.ts';
import type { Store } from '../../src/domain/store.ts';
import { sqliteEngine } from '../support/engines.ts';
import { withStore } from '../support/open-store.ts';

/** Applies only the first change of the batch it is told to fail on, then throws. */
class FailingActivity extends RoomActivity {
  failNext = false;

  override apply(changes: readonly Change[]): void {
    if (!this.failNext) return super.apply(changes);
    this.failNext = false;
    super.apply(changes.slice(0, 1));
    throw new Error('room activity: apply failed');
  }
}

const ROOM = 'r';

describe('RoomActivity after a failed apply', () => {
  it('answers what a fresh one and the store answer, and keeps in step from there', () =>
    withStore(sqliteEngine, {}, async (store: Store) => {
      const errors: unknown[] = [];
      const source: ActivitySource = {
        recent: (rooms, perRoom) => store.messages.recent(rooms, perRoom),
        get head() {
          return feed.head;
        },
        changesSince: (after, limit) => feed.changesSince(after, limit),
      };
      const activity = new FailingActivity(source);
      const feed: ChangeFeed = new ChangeFeed(store.changes, (e) => errors.push(e), [activity]);
      await feed.start();
      const post = (author: string): Promise<Message> =>
        store.messages.create({
          id: uuidv7(),
          room: ROOM,
          author,
          content: 'hi',
          createdAt: new Date().toISOString(),
        });
      const caughtUp = async () => {
        const { latest } = await store.changes.bounds();
        await feed.reached(latest);
        assert.equal(feed.head, latest);
      };
      /** The window's answers and the store's for the same questions. */
      const answers = async (window: Awaited<ReturnType<RoomActivity['windows']>>) => {
        const w = window.get(ROOM)!;
        return {
          newest: w.newest(),
          ids: w.entries.map((e) => e.id),
          adaUnread: w.unread('ada', (await store.readMarkers.get(ROOM, 'ada')).lastRead),
          bobUnread: w.unread('bob', null),
        };
      };
      const stored = async () => {
        const newest = (await store.messages.recent([ROOM], WINDOW_SIZE)).rooms.get(ROOM) ?? [];
        return {
          newest: newest[0] ?? null,
          ids: newest.map((m) => m.id).reverse(),
          adaUnread: (await store.readMarkers.get(ROOM, 'ada')).unread,
          bobUnread: (await store.readMarkers.get(ROOM, 'bob')).unread,
        };
      };
      try {
        const first: Message[] = [];
        for (const author of ['ada', 'bob', 'bob', 'cy', 'ada']) first.push(await post(author));
        await store.readMarkers.put(ROOM, 'ada', first[1]!.id, () => true);
        await caughtUp();
        // The room's window is kept from here, and follows the feed's batches.
        await activity.windows([ROOM]);

        activity.failNext = true;
        // One batch: the window gets only the first create, then the apply fails.
        const late = await post('bob');
        await post('cy');
        await store.messages.delete(late.id, () => undefined);
        await post('bob');
        await caughtUp();
        assert.deepEqual(
          errors.map((e) => (e as Error).message),
          ['room activity: apply failed'],
        );

        const fresh = new RoomActivity(source);
        const after = await answers(await activity.windows([ROOM]));
        assert.deepEqual(after, await answers(await fresh.windows([ROOM])));
        assert.deepEqual(after, await stored());

        // The feed goes on: the window loaded after the reset follows the next batches.
        await post('cy');
        await store.messages.delete(first[4]!.id, () => undefined);
        await caughtUp();
        assert.deepEqual(await answers(await activity.windows([ROOM])), await stored());
        assert.equal(errors.length, 1);
      } finally {
        await feed.stop();
      }
    }));
});

describe('RoomActivity loading a window while another follower is loaded again', () => {
  it('reads the gap up to the batch the feed is handing out: the window has its message', async () => {
    // A log in memory: the window's snapshot must be taken at a chosen moment.
    const log: Change[] = [];
    const created = (seq: number): Change => ({
      seq,
      kind: 'message.created',
      room: ROOM,
      subject: null,
      madePrivate: false,
      data: JSON.stringify({ id: uuidv7(), author: 'ada', createdAt: new Date().toISOString() }),
    });
    const changeLog = {
      bounds: async () => ({ latest: log.at(-1)?.seq ?? 0, purgedThrough: 0 }),
      since: async (after: number, limit: number) =>
        log.filter((c) => c.seq > after).slice(0, limit),
      purge: async () => undefined,
      watch: () => async () => undefined,
    };
    // Another follower: it fails the second batch, and its load again waits for a gate.
    let failing = false;
    let openGate!: () => void;
    let reloading!: () => void;
    const reloadBegun = new Promise<void>((resolve) => (reloading = resolve));
    const other = {
      load: async () => {
        if (!failing) return;
        reloading();
        await new Promise<void>((resolve) => (openGate = resolve));
        failing = false;
      },
      apply: () => {
        if (failing) throw new Error('other follower: apply failed');
      },
      reset: () => undefined,
    };
    // The window's snapshot holds message 1 only; it is answered once we let it.
    let answerRecent!: () => void;
    const recent: ActivitySource['recent'] = async (rooms) => {
      const held = log.filter((c) => c.seq <= 1).map((c) => JSON.parse(c.data) as Message);
      await new Promise<void>((resolve) => (answerRecent = resolve));
      return { seq: 1, rooms: new Map(rooms.map((room) => [room, held.reverse()])) };
    };
    const errors: unknown[] = [];
    const { feed, activity } = feedWithActivity(
      changeLog as unknown as ChangeLog,
      recent,
      (e) => errors.push(e),
      [other],
    );
    log.push(created(1));
    await feed.start();
    try {
      const windows = activity.windows([ROOM]);
      log.push(created(2));
      failing = true;
      feed.wake();
      await reloadBegun;
      // The window's load ends while the other follower is loaded again.
      answerRecent();
      const window = (await windows).get(ROOM)!;
      openGate();
      await feed.reached(2);
      assert.equal(feed.head, 2);
      assert.equal(window.newest()?.id, JSON.parse(log[1]!.data).id, 'message 2 is the newest');
      assert.deepEqual(
        errors.map((e) => (e as Error).message),
        ['other follower: apply failed'],
      );
    } finally {
      await feed.stop();
    }
  });
});

describe('RoomActivity loaded again', () => {
  it('drops the windows lists built while it was reset: the feed gave them no batch meanwhile', async () => {
    const loads: string[][] = [];
    const source: ActivitySource = {
      recent: async (rooms) => {
        loads.push([...rooms]);
        return { seq: 0, rooms: new Map(rooms.map((r) => [r, []])) };
      },
      head: 0,
      changesSince: async () => [],
    };
    const activity = new RoomActivity(source);
    await activity.load();
    activity.reset(); // the feed now hands it nothing until it is loaded again
    await activity.windows([ROOM]); // a room list meanwhile
    await activity.load();
    await activity.windows([ROOM]);
    assert.deepEqual(loads, [[ROOM], [ROOM]], 'the window built while reset was read again');
  });
});
