/**
 * A follower of the change feed that fails to apply a batch: the batch still
 * reaches the other followers, the listeners and the waiters, in order; the
 * failure is reported; the follower is reset and loaded again before the
 * listeners get that batch (its load, if it fails, tried again later by one
 * timer, meanwhile `settling` pending), and the feed goes on. The log is a real SQLite
 * store's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { AccessView } from '../../src/domain/access-view.ts';
import type { Change } from '../../src/domain/change.ts';
import type { ChangeLog } from '../../src/domain/change-log.ts';
import { ChangeFeed, type ChangeBatch, type FeedFollower } from '../../src/domain/change-feed.ts';
import type { Store } from '../../src/domain/store.ts';
import { sqliteEngine } from '../support/engines.ts';
import { eventually } from '../events/event-helpers.ts';
import { withStore } from '../support/open-store.ts';

const span = (changes: readonly Change[]) => `${changes[0]!.seq}-${changes.at(-1)!.seq}`;

/** Writes what `write` does, then waits until the feed has handed out all of it. */
async function round(store: Store, feed: ChangeFeed, write: () => Promise<unknown>) {
  await write();
  const { latest } = await store.changes.bounds();
  await feed.reached(latest);
  // reached() also gives up after a while: the head says whether it got there.
  assert.equal(feed.head, latest);
}

const messages = (store: Store, n: number) => async () => {
  for (let i = 0; i < n; i += 1) {
    const createdAt = new Date().toISOString();
    await store.messages.create({
      id: uuidv7(),
      room: 'general',
      author: 'bob',
      content: `m${i}`,
      createdAt,
    });
  }
};

/** Records what the feed asks of it; fails an apply or a load when told to. */
class Recorder implements FeedFollower {
  failApply = false;
  /** How many loads from now on fail. */
  failLoads = 0;
  constructor(
    readonly name: string,
    readonly events: string[],
  ) {}

  async load(): Promise<void> {
    if (this.failLoads > 0) {
      this.failLoads -= 1;
      this.events.push(`${this.name} load failed`);
      throw new Error(`${this.name}: load failed`);
    }
    this.events.push(`${this.name} load`);
  }

  apply(changes: readonly Change[]): void {
    if (this.failApply) {
      this.failApply = false;
      this.events.push(`${this.name} ${span(changes)} failed`);
      throw new Error(`${this.name}: apply failed`);
    }
    this.events.push(`${this.name} ${span(changes)}`);
  }

  reset(): void {
    this.events.push(`${this.name} reset`);
  }
}

/** A feed over the store's log with a flaky and a steady follower, and one listener. */
async function withFeed(
  store: Store,
  fn: (
    feed: ChangeFeed,
    flaky: Recorder,
    seen: { batches: ChangeBatch[]; events: string[]; errors: unknown[] },
  ) => Promise<void>,
) {
  const events: string[] = [];
  const errors: unknown[] = [];
  const flaky = new Recorder('flaky', events);
  const feed = new ChangeFeed(store.changes, (error) => errors.push(error), [
    flaky,
    new Recorder('steady', events),
  ]);
  await feed.start();
  const batches: ChangeBatch[] = [];
  feed.subscribe((batch) => {
    batches.push(batch);
    events.push(`listener ${span(batch.changes)}`);
  });
  try {
    await fn(feed, flaky, { batches, events, errors });
  } finally {
    await feed.stop();
  }
}

/** The listener got every change after `from`, each once, in order, in batches that follow on. */
async function assertEveryChange(store: Store, from: number, batches: readonly ChangeBatch[]) {
  const logged = (await store.changes.since(from, 10_000)).map((c) => c.seq);
  assert.ok(logged.length > 0);
  assert.deepEqual(
    batches.flatMap((b) => b.changes.map((c) => c.seq)),
    logged,
  );
  let at = from;
  for (const batch of batches) {
    assert.equal(batch.after, at);
    at = batch.changes.at(-1)!.seq;
  }
}

describe('ChangeFeed: a follower whose apply fails', () => {
  it('is reported, reset and loaded again before the listeners get the batch; the feed goes on', () =>
    withStore(sqliteEngine, {}, (store) =>
      withFeed(store, async (feed, flaky, { batches, events, errors }) => {
        const start = feed.head;
        await round(store, feed, messages(store, 3));
        const failedAfter = feed.head;
        flaky.failApply = true;
        await round(store, feed, messages(store, 3));
        await round(store, feed, messages(store, 3));

        await assertEveryChange(store, start, batches);
        assert.deepEqual(
          errors.map((e) => (e as Error).message),
          ['flaky: apply failed'],
        );
        const expected = ['flaky load', 'steady load'];
        for (const { after, changes } of batches) {
          const at = span(changes);
          if (after === failedAfter) {
            expected.push(`flaky ${at} failed`, 'flaky reset', `steady ${at}`, 'flaky load');
          } else {
            expected.push(`flaky ${at}`, `steady ${at}`);
          }
          expected.push(`listener ${at}`);
        }
        assert.ok(
          batches.some((b) => b.after === failedAfter),
          'the failed batch reached the listener',
        );
        assert.ok(batches.at(-1)!.after > failedAfter, 'a batch after it too');
        assert.deepEqual(events, expected);
      }),
    ));

  it('whose load fails too: the batch still goes out; settling stays pending until a load succeeds', () =>
    withStore(sqliteEngine, {}, (store) =>
      withFeed(store, async (feed, flaky, { batches, events, errors }) => {
        const start = feed.head;
        flaky.failApply = true;
        flaky.failLoads = 1;
        await round(store, feed, messages(store, 2));
        const settling = feed.settling;
        assert.notEqual(settling, undefined, 'streams that judge by it are told to wait');
        // The retry (its timer does not hold the process) loads it.
        await eventually(() => feed.settling === undefined, 'loaded again');
        await round(store, feed, messages(store, 2));

        await assertEveryChange(store, start, batches);
        assert.deepEqual(
          errors.map((e) => (e as Error).message),
          ['flaky: apply failed', 'flaky: load failed'],
        );
        assert.ok(batches.length >= 2);
        const expected = ['flaky load', 'steady load'];
        batches.forEach(({ changes }, i) => {
          const at = span(changes);
          if (i === 0) {
            expected.push(`flaky ${at} failed`, 'flaky reset', `steady ${at}`, 'flaky load failed');
          } else {
            if (i === 1) expected.push('flaky load');
            expected.push(`flaky ${at}`, `steady ${at}`);
          }
          expected.push(`listener ${at}`);
        });
        assert.deepEqual(events, expected);
      }),
    ));

  it('whose load keeps failing: tried again by one timer, later each time, not at every wake', () =>
    withStore(sqliteEngine, {}, (store) =>
      withFeed(store, async (feed, flaky, { events }) => {
        flaky.failApply = true;
        flaky.failLoads = 1000;
        await round(store, feed, messages(store, 1));
        // A busy instance: writes and new streams wake the feed all the time.
        for (let i = 0; i < 120; i += 1) {
          if (i % 10 === 0) await messages(store, 1)();
          feed.wake();
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        // At least 1.2 s after the failure: tried again at 0.5 s, 1.5 s, 3.5 s, 7.5 s... (a slow
        // machine may get further down that list; a load at every wake would be over a hundred).
        const tries = events.filter((e) => e === 'flaky load failed').length;
        assert.ok(tries >= 2 && tries <= 5, `${tries} loads`);
        assert.notEqual(feed.settling, undefined);
      }),
    ));
});

/** An access view that applies only the first change of the batch it is told to fail on. */
class FailingAccessView extends AccessView {
  failNext = false;
  /** What it answered when each load began: what a stream would be told meanwhile. */
  readonly duringLoad: string[] = [];

  override async load(): Promise<void> {
    this.duringLoad.push(`${this.visibility('open')} ${this.isMember('secret', 'ada')}`);
    await super.load();
  }

  override apply(changes: readonly Change[]): void {
    if (!this.failNext) return super.apply(changes);
    this.failNext = false;
    super.apply(changes.slice(0, 1));
    throw new Error('access view: apply failed');
  }
}

describe('AccessView after a failed apply', () => {
  it('answers as one loaded from the store now, and called every room private until it was', () =>
    withStore(sqliteEngine, {}, async (store) => {
      const now = () => new Date().toISOString();
      const put = (name: string, visibility: 'public' | 'private', creator: string | null) =>
        store.rooms.put(name, null, creator, now(), () => ({ visibility, topic: '' }));
      const join = (room: string, subject: string) =>
        store.members.put(room, subject, null, now(), () => 'member');
      await put('open', 'public', null);
      await put('secret', 'private', 'ada');

      const errors: unknown[] = [];
      const view = new FailingAccessView(store.rooms);
      const feed = new ChangeFeed(store.changes, (error) => errors.push(error), [view]);
      await feed.start();
      const seen: string[] = [];
      // What a stream would be told of each room when the batch reaches it.
      feed.subscribe(() =>
        seen.push(`${view.visibility('open')} ${view.isMember('secret', 'bob')}`),
      );
      try {
        view.failNext = true;
        // The view applies only the first change of the batch, then fails.
        await round(store, feed, async () => {
          await put('hidden', 'private', 'cy');
          await join('secret', 'bob');
          await put('open', 'private', null);
          await join('open', 'ada');
        });
        assert.deepEqual(
          errors.map((e) => (e as Error).message),
          ['access view: apply failed'],
        );
        // At start and after the reset it knew nothing: every room private, no member.
        assert.deepEqual(view.duringLoad, ['private false', 'private false']);
        // The listener got the batch after the view was loaded again.
        assert.equal(seen.at(-1), 'private true');

        const fresh = new AccessView(store.rooms);
        await fresh.load();
        const answers = (v: AccessView) =>
          ['general', 'open', 'secret', 'hidden'].map((room) => [
            room,
            v.visibility(room),
            ...['ada', 'bob', 'cy'].map((subject) => v.isMember(room, subject)),
          ]);
        assert.deepEqual(answers(view), answers(fresh));
        assert.deepEqual(answers(view)[1], ['open', 'private', true, false, false]);

        // The feed goes on: a later change reaches the view as it comes.
        await round(store, feed, () => put('open', 'public', null));
        assert.equal(view.visibility('open'), 'public');
        assert.equal(errors.length, 1);
      } finally {
        await feed.stop();
      }
    }));
});

describe('ChangeFeed behind the purge', () => {
  it('resets and loads again every follower when changes after its head were purged unseen', () =>
    withStore(sqliteEngine, {}, async (store) => {
      // The store's log, whose reads wait while `held` (so the poll cannot read before the purge)
      // and leave out the changes named in `rolledBack` (a gap as a rolled-back write leaves).
      let release: () => void = () => undefined;
      let held: Promise<void> | undefined;
      const rolledBack = new Set<number>();
      const log: ChangeLog = {
        bounds: () => store.changes.bounds(),
        since: async (after, limit) => {
          await held;
          return (await store.changes.since(after, limit)).filter((c) => !rolledBack.has(c.seq));
        },
        purge: (before) => store.changes.purge(before),
        watch: (onChange) => store.changes.watch(onChange),
      };
      const events: string[] = [];
      const errors: unknown[] = [];
      const one = new Recorder('one', events);
      const feed = new ChangeFeed(log, (error) => errors.push(error), [
        one,
        new Recorder('two', events),
      ]);
      await feed.start();
      feed.subscribe((batch) => events.push(`listener ${batch.after}: ${span(batch.changes)}`));
      try {
        await round(store, feed, messages(store, 2));
        const seen = feed.head;
        held = new Promise((resolve) => (release = resolve));
        await messages(store, 3)();
        await store.changes.purge(new Date(Date.now() + 60_000)); // all but the newest
        const { latest, purgedThrough } = await store.changes.bounds();
        assert.equal(purgedThrough, latest - 1);
        assert.ok(purgedThrough > seen + 1, 'changes the feed never read were purged');
        events.length = 0;
        one.failLoads = 1; // the other is loaded all the same, and this one later
        const reached = feed.reached(latest);
        release();
        assert.equal(await reached, true);
        assert.deepEqual(events, [
          'one reset',
          'two reset',
          'one load failed',
          'two load',
          // What the log still holds: a stream at `seen` re-reads the gap and finds it purged.
          `listener ${purgedThrough}: ${latest}-${latest}`,
        ]);
        assert.deepEqual(
          errors.map((e) => (e as Error).message),
          [`changes after ${seen} were purged unseen`, 'one: load failed'],
        );
        await eventually(() => feed.settling === undefined, 'one loaded by the retry timer');
        assert.equal(events.at(-1), 'one load');
        // A gap with nothing purged past the head (a rolled-back write's number) resets nothing.
        events.length = 0;
        rolledBack.add(latest + 1);
        await round(store, feed, messages(store, 2));
        const next = latest + 2;
        assert.deepEqual(events, [
          `one ${next}-${next}`,
          `two ${next}-${next}`,
          `listener ${latest}: ${next}-${next}`,
        ]);
        assert.equal(errors.length, 2);
      } finally {
        release();
        await feed.stop();
      }
    }));
});
