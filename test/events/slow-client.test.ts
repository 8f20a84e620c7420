/**
 * Slow and vanished clients cost bounded memory: a stream whose client stops
 * reading waits (it holds at most MAX_BUFFERED_BYTES plus one frame), re-reads
 * what it missed from the change log once the client reads again, and is
 * dropped if the client does not read within the stall timeout.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { assertStrictlyIncreasing, createMessage, eventually } from './event-helpers.ts';
import { changeEvents, connectSse } from './sse-client.ts';

// 4000 code points of 4 UTF-8 bytes: about 16 KB per event.
const BIG = '😀'.repeat(4000);
const ROUND = 20;
/** Bounds the writes: far more than any loopback socket buffers before the stream stalls. */
const MAX_ROUNDS = 200;

/** Writes big messages until `done` holds; returns how many were written. */
async function writeUntil(t: TestApp, done: () => boolean, what: string): Promise<number> {
  let written = 0;
  for (let round = 0; round < MAX_ROUNDS && !done(); round++) {
    for (let i = 0; i < ROUND; i++) {
      await createMessage(t, { content: BIG, room: 'slow' });
      written++;
    }
  }
  assert.ok(done(), `${what} after ${written} messages`);
  return written;
}

for (const engine of engines) {
  describe(`slow event stream clients (${engine.name})`, async () => {
    const skip = await skipUnlessEngine(engine);

    it('drops a client that stops reading', { skip }, async () => {
      const t = await startTestApp(engine, { eventsHeartbeatMs: 200, sqliteSynchronous: 'off' });
      try {
        await t.listen();
        const client = await connectSse(`${t.url}/api/events`, { paused: true });
        assert.equal(client.status, 200);
        await eventually(() => t.app.feed.subscriberCount === 1, 'the stream subscribed');
        await writeUntil(t, () => t.app.http.eventStreams().dropped === 1, 'the client dropped');
        await eventually(() => t.app.feed.subscriberCount === 0, 'its listener removed');
        assert.equal(t.app.http.eventStreams().open, 0);
        client.close();
      } finally {
        await t.close();
      }
    });

    it(
      'lets a slow reader catch up from the log with no gap and no duplicate',
      { skip },
      async () => {
        // A long stall timeout: this client does read, only late.
        const t = await startTestApp(engine, {
          eventsHeartbeatMs: 10_000,
          sqliteSynchronous: 'off',
        });
        try {
          await t.listen();
          const client = await connectSse(`${t.url}/api/events?room=slow`, { paused: true });
          await eventually(() => t.app.feed.subscriberCount === 1, 'the stream subscribed');
          let written = await writeUntil(
            t,
            () => t.app.http.eventStreams().stalled === 1,
            'the stream stalled',
          );
          // Changes committed while it waits are not buffered for it: it reads them from the log.
          for (let i = 0; i < 5; i++) {
            await createMessage(t, { content: `while stalled ${i}`, room: 'slow' });
            written++;
          }
          client.response.resume();
          await client.waitFor(
            (c) => changeEvents(c).length >= written,
            `${written} events`,
            60_000,
          );
          const seqs = changeEvents(client).map((e) => e.seq);
          assert.equal(seqs.length, written);
          assertStrictlyIncreasing(seqs, 'event ids');
          const log = await t.app.store.changes.since(0, written + 10);
          assert.deepEqual(
            seqs,
            log.filter((c) => c.kind.startsWith('message.')).map((c) => c.seq),
          );
          assert.equal(t.app.http.eventStreams().dropped, 0);
          client.close();
        } finally {
          await t.close();
        }
      },
    );

    it(
      'ends a stalled stream on shutdown instead of waiting for its client',
      { skip },
      async () => {
        const t = await startTestApp(engine, {
          eventsHeartbeatMs: 10_000,
          sqliteSynchronous: 'off',
        });
        let closed = false;
        try {
          await t.listen();
          const client = await connectSse(`${t.url}/api/events`, { paused: true });
          await eventually(() => t.app.feed.subscriberCount === 1, 'the stream subscribed');
          await writeUntil(t, () => t.app.http.eventStreams().stalled === 1, 'the stream stalled');
          await t.close(); // resolves only once every connection is gone
          closed = true;
          assert.equal(t.app.http.eventStreams().open, 0);
          client.close();
        } finally {
          if (!closed) await t.close();
        }
      },
    );
  });
}
