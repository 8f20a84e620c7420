/**
 * A stream that catches up while the feed's access view is loaded again
 * (after it failed to apply a batch) waits for the load, also when the load
 * fails and is tried again: judged by the reset view, which calls every room
 * private, it would leave out for good changes its subject may read. The log is a real SQLite store's; the stream writes
 * to an in-memory response.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { v7 as uuidv7 } from 'uuid';
import { AccessView } from '../../src/domain/access-view.ts';
import type { Change } from '../../src/domain/change.ts';
import { ChangeFeed } from '../../src/domain/change-feed.ts';
import type { Store } from '../../src/domain/store.ts';
import { EventConnection, type EventConnectionOptions } from '../../src/http/event-connection.ts';
import { sqliteEngine } from '../support/engines.ts';
import { eventually } from '../events/event-helpers.ts';
import { withStore } from '../support/open-store.ts';

/** An access view that fails the next apply when told to, and whose next load waits for a gate. */
class GatedAccessView extends AccessView {
  failNext = false;
  /** The gated load fails (once) after the gate opens: the feed tries again a little later. */
  failGatedLoad = false;
  /** Every load fails while set. */
  failLoads = false;
  #gate: Promise<void> | undefined;
  #entered: (() => void) | undefined;

  /** The next load waits until the returned `open` is called; `entered` resolves when it begins. */
  holdNextLoad(): { entered: Promise<void>; open: () => void } {
    let open!: () => void;
    this.#gate = new Promise((resolve) => (open = resolve));
    const entered = new Promise<void>((resolve) => (this.#entered = resolve));
    return { entered, open };
  }

  override async load(): Promise<void> {
    if (this.failLoads) throw new Error('access view: load refused');
    const gate = this.#gate;
    this.#gate = undefined;
    if (gate !== undefined) {
      this.#entered?.();
      await gate;
      if (this.failGatedLoad) {
        this.failGatedLoad = false;
        throw new Error('access view: load failed');
      }
    }
    await super.load();
  }

  override apply(changes: readonly Change[]): void {
    if (!this.failNext) return super.apply(changes);
    this.failNext = false;
    throw new Error('access view: apply failed');
  }
}

async function post(store: Store, room: string, content: string): Promise<void> {
  await store.messages.create({
    id: uuidv7(),
    room,
    author: 'bob',
    content,
    createdAt: new Date().toISOString(),
  });
}

function connectionOptions(
  res: PassThrough,
  feed: ChangeFeed,
  access: AccessView,
  errors: unknown[],
): EventConnectionOptions {
  return {
    res: res as unknown as ServerResponse,
    feed,
    room: undefined,
    actor: null,
    access,
    heartbeatMs: 60_000,
    stallTimeoutMs: 10_000,
    onError: (error) => errors.push(error),
    onClosed: () => undefined,
    onDropped: () => undefined,
  };
}

/** The `id:` lines the stream has written so far. */
const sentIds = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

/** A public room `open`, and a started feed that follows a gated access view. */
async function publicRoomFeed(store: Store) {
  await store.rooms.put('open', null, null, new Date().toISOString(), () => ({
    visibility: 'public',
    topic: '',
  }));
  const errors: unknown[] = [];
  const view = new GatedAccessView(store.rooms);
  const feed = new ChangeFeed(store.changes, (error) => errors.push(error), [view]);
  await feed.start();
  return { errors, view, feed };
}

describe('a stream catching up while the access view is loaded again', () => {
  for (const loadFails of [false, true]) {
    it(`waits for the load${loadFails ? ', failed once and tried again,' : ''} then sends every change of a public room (none lost to the reset view)`, () =>
      withStore(sqliteEngine, {}, async (store) => {
        const { errors, view, feed } = await publicRoomFeed(store);
        view.failGatedLoad = loadFails;
        const res = new PassThrough();
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        try {
          const start = feed.head;
          for (let i = 0; i < 3; i += 1) await post(store, 'open', `before ${i}`);
          const before = (await store.changes.bounds()).latest;
          await feed.reached(before);
          assert.equal(feed.head, before);

          // A stream that is live when the view fails: it gets the failed batch by the log.
          const liveRes = new PassThrough();
          let liveText = '';
          liveRes.on('data', (chunk: Buffer) => (liveText += chunk.toString()));
          const live = new EventConnection({
            ...connectionOptions(liveRes, feed, view, errors),
            actor: { subject: 'bo', admin: false },
          });
          live.begin(before, []);

          // The next batch fails in the view; its load waits until we open the gate.
          view.failNext = true;
          const held = view.holdNextLoad();
          await post(store, 'open', 'during');
          const latest = (await store.changes.bounds()).latest;
          feed.wake();
          await held.entered;
          assert.notEqual(feed.settling, undefined, 'the feed says a load is under way');
          assert.equal(view.visibility('open'), 'private', 'the reset view knows nothing');

          // A stream of a non-admin subject starts catching up from before the three messages.
          const connection = new EventConnection({
            ...connectionOptions(res, feed, view, errors),
            actor: { subject: 'ada', admin: false },
          });
          connection.begin(start, []);
          await sleep(50);
          assert.deepEqual(sentIds(text), [], 'nothing is judged while the view is loaded again');

          held.open();
          const logged = (await store.changes.since(start, 100)).map((c) => c.seq);
          assert.equal(logged.at(-1), latest);
          await eventually(
            () => logged.every((seq) => sentIds(text).includes(seq)),
            'the stream sends every change of the public room',
          );
          assert.deepEqual(sentIds(text), logged, 'each once, in order');
          await eventually(
            () => sentIds(liveText).includes(latest),
            'the live stream sends the change of the failed batch',
          );
          assert.deepEqual(sentIds(liveText), [latest]);
          live.end();
          liveRes.destroy();
          assert.deepEqual(
            errors.map((e) => (e as Error).message),
            loadFails
              ? ['access view: apply failed', 'access view: load failed']
              : ['access view: apply failed'],
          );
          connection.end();
        } finally {
          res.destroy();
          await feed.stop();
        }
      }));
  }
});

describe('a stream whose access view keeps failing to load', () => {
  it('stays open and sends nothing (not even a heartbeat id past the change) through failed tries; then the change; an admin stream goes on', () =>
    withStore(sqliteEngine, {}, async (store) => {
      const { errors, view, feed } = await publicRoomFeed(store);
      const judgedRes = new PassThrough();
      const adminRes = new PassThrough();
      let judgedText = '';
      let adminText = '';
      judgedRes.on('data', (chunk: Buffer) => (judgedText += chunk.toString()));
      adminRes.on('data', (chunk: Buffer) => (adminText += chunk.toString()));
      try {
        const start = feed.head;
        assert.equal(feed.unloadedFollowers, 0);
        view.failNext = true;
        view.failLoads = true;
        await post(store, 'open', 'judged late, never lost');
        const latest = (await store.changes.bounds()).latest;
        feed.wake();
        await eventually(() => errors.length >= 2, 'the load fails');
        assert.equal(feed.unloadedFollowers, 1);

        // Heartbeats every 20 ms: a stream that judged the change by the reset view (which calls
        // every room private) would leave it out and move on, and a heartbeat would carry its id.
        const options = { heartbeatMs: 20 };
        const judged = new EventConnection({
          ...connectionOptions(judgedRes, feed, view, errors),
          ...options,
          actor: { subject: 'ada', admin: false },
        });
        const admin = new EventConnection({
          ...connectionOptions(adminRes, feed, view, errors),
          ...options,
          actor: { subject: 'root', admin: true },
        });
        judged.begin(start, []);
        admin.begin(start, []);
        await eventually(
          () =>
            errors.some((e, i) => i > 1 && (e as Error).message === 'access view: load refused'),
          'the load fails again (its timer tried it)',
        );
        assert.match(judgedText, /: heartbeat/, 'kept open by heartbeats');
        assert.deepEqual(sentIds(judgedText), [], 'nothing judged, nothing skipped');
        assert.equal(judged.closed, false);
        assert.deepEqual(
          sentIds(adminText),
          [latest],
          'the admin stream is not judged: it goes on',
        );

        view.failLoads = false;
        await eventually(() => feed.unloadedFollowers === 0, 'a later try loads the view');
        assert.equal(feed.settling, undefined);
        await eventually(
          () => sentIds(judgedText).length > 0,
          'the judged stream sends the change',
        );
        assert.deepEqual(sentIds(judgedText), [latest]);
        judged.end();
        admin.end();
      } finally {
        judgedRes.destroy();
        adminRes.destroy();
        await feed.stop();
      }
    }));
});
