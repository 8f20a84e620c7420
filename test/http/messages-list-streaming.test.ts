/**
 * GET /api/messages without `limit` over real sockets, with readers that stop
 * reading: the body is pulled from the store only as fast as the client takes
 * it, a client that takes nothing for LIST_STALL_TIMEOUT_MS is cut (no closing
 * bracket), and one client reads at most LIST_MAX_STREAMS_PER_CLIENT such
 * lists at once (429 past it) while other clients and paged lists are served.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { STREAM_BATCH_SIZE } from '../../src/domain/message-service.ts';
import { createStore } from '../../src/store/create-store.ts';
import { engines, type TestDatabase } from '../support/engines.ts';
import { silent } from '../support/open-store.ts';
import { startTestApp, testConfig, type TestApp } from '../support/test-app.ts';
import { eventually } from '../events/event-helpers.ts';
import { wrapStore } from './http-contract.ts';

const BATCHES = 8;
/** About 2 MB per batch: the whole list (17 MB) is far more than loopback sockets buffer (about 4 MB). */
const CONTENT = 'x'.repeat(4000);

interface Reader {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Starts reading (if paused); resolves with the whole body and whether it ended normally. */
  readAll(): Promise<{ text: string; complete: boolean }>;
  close(): void;
}

/** GET `path` from `localAddress` (another address of 127.0.0.0/8 is another client); `paused` reads nothing. */
function get(base: string, path: string, localAddress: string, paused: boolean): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${path}`, { localAddress, agent: false });
    request.on('error', reject);
    request.on('response', (response) => {
      if (paused) response.pause();
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      const ended = new Promise<{ text: string; complete: boolean }>((done) => {
        const finish = () =>
          done({ text: Buffer.concat(chunks).toString('utf8'), complete: response.complete });
        response.once('end', finish);
        response.once('close', finish);
        response.once('error', finish);
      });
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        readAll: () => {
          response.resume();
          return ended;
        },
        close: () => request.destroy(),
      });
    });
  });
}

function connections(t: TestApp): Promise<number> {
  return new Promise((resolve, reject) =>
    t.app.http.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

for (const engine of engines) {
  describe(`streamed lists and readers that stop reading (${engine.name})`, async () => {
    const skip = await engine.unavailable();
    let db: TestDatabase | undefined;
    const total = STREAM_BATCH_SIZE * BATCHES;

    before(async () => {
      if (skip) return;
      db = await engine.createDatabase();
      const store = createStore(testConfig(db.url, { sqliteSynchronous: 'off' }), silent);
      await store.migrate();
      for (let i = 0; i < total; i += 250) {
        await Promise.all(
          Array.from({ length: 250 }, () =>
            store.messages.create({
              id: uuidv7(),
              room: 'general',
              author: 'bulk',
              content: CONTENT,
              createdAt: new Date().toISOString(),
            }),
          ),
        );
      }
      await store.close();
    });
    after(async () => db?.cleanup());

    it(
      'reads the store only as fast as the client takes the body, and cuts a client that takes nothing',
      { skip },
      async () => {
        let reads = 0;
        const store = createStore(testConfig(db!.url), silent);
        const counted = wrapStore(store, (real) => ({
          messages: {
            list: async (query) => {
              reads += 1;
              return real.messages.list(query);
            },
          },
        }));
        const t = await startTestApp(engine, { listStallTimeoutMs: 500 }, { store: counted }, db);
        let reader: Reader | undefined;
        try {
          await t.listen();
          reader = await get(t.url, '/api/messages', '127.0.0.1', true);
          assert.equal(reader.status, 200);
          let open = -1;
          await eventually(
            () => open === 0,
            'the stalled reader cut',
            30_000,
            async () => {
              open = await connections(t);
            },
          );
          assert.ok(
            reads < BATCHES,
            `only what the client could take was read (${reads} of ${BATCHES + 1} reads)`,
          );
          const { text, complete } = await reader.readAll();
          assert.equal(complete, false, 'the body did not end normally');
          assert.ok(text.startsWith('[{'), text.slice(0, 20));
          assert.ok(!text.endsWith(']'), 'no closing bracket');
          assert.ok(text.length < total * CONTENT.length, 'a part of the list');

          // A client that reads gets the whole list.
          const whole = await (await get(t.url, '/api/messages', '127.0.0.1', false)).readAll();
          assert.equal(whole.complete, true);
          assert.equal((JSON.parse(whole.text) as unknown[]).length, total);
        } finally {
          reader?.close();
          await t.close();
        }
      },
    );

    it(
      'a slow store is not a stalled reader: time spent reading batches does not count',
      { skip },
      async () => {
        let slow = false;
        const store = createStore(testConfig(db!.url), silent);
        const delayed = wrapStore(store, (real) => ({
          messages: {
            list: async (query) => {
              // Three times the stall timeout, on the batches read after the status went out.
              if (slow) await new Promise((resolve) => setTimeout(resolve, 1200));
              return real.messages.list(query);
            },
          },
        }));
        // Not shorter: the reader here shares two busy cores with the rest of the suite, and a
        // reader that really pauses for the timeout is rightly cut.
        const t = await startTestApp(engine, { listStallTimeoutMs: 400 }, { store: delayed }, db);
        try {
          await t.listen();
          // Where the last STREAM_BATCH_SIZE + 99 messages begin: two batches after the first.
          const all = await (await get(t.url, '/api/messages', '127.0.0.1', false)).readAll();
          const ids = (JSON.parse(all.text) as { id: string }[]).map((m) => m.id);
          const from = ids[ids.length - (STREAM_BATCH_SIZE + 100)]!;
          slow = true;
          const list = await (
            await get(t.url, `/api/messages?after=${from}`, '127.0.0.1', false)
          ).readAll();
          assert.equal(list.complete, true, 'the whole list');
          assert.equal((JSON.parse(list.text) as unknown[]).length, STREAM_BATCH_SIZE + 99);
        } finally {
          await t.close();
        }
      },
    );

    it(
      'caps the lists without limit one client reads at once with a 429; other clients and pages are served',
      { skip },
      async () => {
        const t = await startTestApp(
          engine,
          { listMaxStreamsPerClient: 2, listStallTimeoutMs: 60_000 },
          {},
          db,
        );
        const readers: Reader[] = [];
        const open = async (path: string, from: string, paused: boolean) => {
          const reader = await get(t.url, path, from, paused);
          readers.push(reader);
          return reader;
        };
        try {
          await t.listen();
          const first = await open('/api/messages', '127.0.0.1', true);
          assert.equal(first.status, 200);
          assert.equal((await open('/api/messages', '127.0.0.1', true)).status, 200);

          const over = await open('/api/messages', '127.0.0.1', false);
          assert.equal(over.status, 429);
          assert.ok(Number(over.headers['retry-after']) > 0, 'Retry-After');
          assert.equal(over.headers['ratelimit-policy'], '"lists";q=2;qu="concurrency"');
          const problem = JSON.parse((await over.readAll()).text) as { type: string };
          assert.equal(problem.type, '/problems/rate-limited');

          const page = await open('/api/messages?limit=10', '127.0.0.1', false);
          assert.equal(page.status, 200, 'a page is not a streamed list');
          assert.equal((JSON.parse((await page.readAll()).text) as unknown[]).length, 10);

          const other = await open('/api/messages', '127.0.0.2', false);
          assert.equal(other.status, 200, 'another client is served');
          assert.equal((JSON.parse((await other.readAll()).text) as unknown[]).length, total);

          first.close();
          let again: Reader | undefined;
          await eventually(
            () => again?.status === 200,
            'a slot free again once a reader left',
            10_000,
            async () => {
              again?.close();
              again = await open('/api/messages', '127.0.0.1', true);
            },
          );
        } finally {
          for (const reader of readers) reader.close();
          await t.close();
        }
      },
    );
  });
}
