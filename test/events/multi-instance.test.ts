/**
 * Several instances on one PostgreSQL: writers hit every instance at once
 * while readers resume from arbitrary ids and hop from instance to instance
 * (alternating Last-Event-ID and ?since). Every reader must see exactly the
 * committed change log after the point it started from: no gap (the "41 made
 * visible after 42" trap), no duplicate, ids strictly increasing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { Change } from '../../src/domain/change.ts';
import type { Message } from '../../src/domain/message.ts';
import { postgresEngine, skipUnlessEngine, type TestDatabase } from '../support/engines.ts';
import { PG_BASE_URL } from '../support/prerequisites.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { assertStrictlyIncreasing, createMessage, eventually } from './event-helpers.ts';
import { changeEvents, connectSse } from './sse-client.ts';

const INSTANCES = 3;
const WRITERS_PER_INSTANCE = 3;
const OPS_PER_WRITER = 40;
const READERS = 9;
const ROOMS = ['alpha', 'beta', 'gamma'];

/** A small seeded generator, so a failing run can be repeated (the seed is printed). */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface Received {
  seq: number;
  event: string;
  data: unknown;
}

describe('event stream across instances (postgres)', async () => {
  const skip = await skipUnlessEngine(postgresEngine);
  let db: TestDatabase;
  const apps: TestApp[] = [];

  before(async () => {
    if (skip) return;
    db = await postgresEngine.createDatabase();
    // They start together, like a deployment: migrations must cope.
    const started = await Promise.all(
      Array.from({ length: INSTANCES }, () =>
        startTestApp(postgresEngine, { eventsHeartbeatMs: 100 }, {}, db),
      ),
    );
    apps.push(...started);
    await Promise.all(apps.map((t) => t.listen()));
  });
  after(async () => {
    await Promise.all(apps.map((t) => t.close()));
    await db?.cleanup();
  });

  it('gives every resuming reader exactly the committed sequence', { skip }, async (t) => {
    const seed = Number(process.env.EVENTS_TEST_SEED ?? Date.now() % 1_000_000);
    t.diagnostic(`seed ${seed}`);
    const rand = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const status = { writersDone: false, latest: -1 };
    let acknowledged = 0;

    const call = async (app: TestApp, method: string, path: string, body?: object) => {
      const response = await fetch(`${app.url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text };
    };
    const latestSeq = async (app: TestApp) =>
      Number((await call(app, 'GET', '/api/messages?limit=1')).headers.get('event-seq'));

    async function writer(index: number) {
      const app = apps[index % INSTANCES]!;
      const mine: Message[] = [];
      for (let op = 0; op < OPS_PER_WRITER; op++) {
        const roll = rand();
        if (mine.length > 0 && roll < 0.25) {
          const target = pick(mine);
          const r = await call(app, 'PUT', `/api/messages/${target.id}`, {
            content: `${target.content}+`,
          });
          assert.equal(r.status, 200, r.text);
          mine[mine.indexOf(target)] = JSON.parse(r.text) as Message;
        } else if (mine.length > 0 && roll < 0.35) {
          const target = mine.splice(mine.indexOf(pick(mine)), 1)[0]!;
          const r = await call(app, 'DELETE', `/api/messages/${target.id}`);
          assert.equal(r.status, 200, r.text);
        } else {
          const r = await call(app, 'POST', '/api/messages', {
            author: `writer${index}`,
            room: pick(ROOMS),
            content: `w${index} op${op}`,
          });
          assert.equal(r.status, 201, r.text);
          mine.push(JSON.parse(r.text) as Message);
        }
        acknowledged++;
      }
    }

    /** Starts at `start`, hops to the next instance every few events, until it has the final change. */
    async function reader(index: number, start: number, room: string | undefined) {
      const received: Received[] = [];
      let since = start;
      for (let hop = 0; hop < 1000; hop++) {
        const app = apps[(index + hop) % INSTANCES]!;
        const params = new URLSearchParams();
        if (room !== undefined) params.set('room', room);
        const byHeader = hop % 2 === 0;
        if (!byHeader) params.set('since', String(since));
        const client = await connectSse(`${app.url}/api/events?${params}`, {
          headers: byHeader ? { 'last-event-id': String(since) } : {},
        });
        assert.equal(client.status, 200);
        const quota = 5 + Math.floor(rand() * 40);
        await client.waitFor(
          (c) =>
            c.events.length >= quota ||
            (status.writersDone && Number(c.lastEventId || since) >= status.latest),
          `reader ${index} hop ${hop}`,
          60_000,
        );
        client.close();
        assert.ok(
          !client.events.some((e) => e.event === 'reset'),
          `reader ${index}: no reset (${client.raw.slice(0, 200)})`,
        );
        received.push(
          ...client.events.map((e) => ({
            seq: Number(e.id),
            event: e.event,
            data: JSON.parse(e.data) as unknown,
          })),
        );
        // The id to resume from is the client's last event id: for a room stream it also moves on heartbeats.
        since = Number(client.lastEventId || since);
        if (status.writersDone && since >= status.latest)
          return { start, room, received, hops: hop + 1 };
      }
      assert.fail(`reader ${index} did not finish`);
    }

    const writers = Array.from({ length: INSTANCES * WRITERS_PER_INSTANCE }, (_, i) => writer(i));
    const readers: Promise<{ start: number; room?: string; received: Received[]; hops: number }>[] =
      [];
    readers.push(reader(0, 0, undefined));
    for (let i = 1; i < READERS; i++) {
      // Join while the writers are busy, from an arbitrary id already committed.
      await new Promise((resolve) => setTimeout(resolve, 20 + rand() * 60));
      const latest = await latestSeq(pick(apps));
      const start = Math.floor(rand() * (latest + 1));
      readers.push(reader(i, start, i % 4 === 0 ? pick(ROOMS) : undefined));
    }
    await Promise.all(writers);
    status.latest = await latestSeq(apps[0]!);
    status.writersDone = true;
    const results = await Promise.all(readers);

    const log: Change[] = await apps[0]!.app.store.changes.since(0, 100_000);
    assert.equal(
      log.filter((c) => c.kind.startsWith('message.')).length,
      acknowledged,
      'one message change per acknowledged write',
    );
    // A room comes into being once, with its first message, however many instances raced to create it.
    assert.deepEqual(
      log
        .filter((c) => c.kind === 'room.created')
        .map((c) => c.room)
        .sort(),
      ROOMS.filter((room) => log.some((c) => c.room === room)),
    );
    assertStrictlyIncreasing(
      log.map((c) => c.seq),
      'change log',
    );
    assert.equal(log.at(-1)!.seq, status.latest);
    let hops = 0;
    for (const [i, r] of results.entries()) {
      hops += r.hops;
      const expected = log
        .filter((c) => c.seq > r.start && (r.room === undefined || c.room === r.room))
        .map((c) => ({ seq: c.seq, event: c.kind, data: JSON.parse(c.data) as unknown }));
      assertStrictlyIncreasing(
        r.received.map((e) => e.seq),
        `reader ${i}`,
      );
      assert.deepEqual(r.received, expected, `reader ${i} (from ${r.start}, room ${r.room})`);
    }
    t.diagnostic(
      `${log.length} changes written through ${INSTANCES} instances by ${writers.length} concurrent writers; ` +
        `${results.length} readers (${results.filter((r) => r.room).length} room-filtered) resumed ${hops} times ` +
        `across instances; every reader saw exactly the committed sequence`,
    );
  });

  it('loses nothing when the LISTEN connections drop', { skip }, async () => {
    const schema = new URL(db.url).searchParams.get('schema');
    const name = `message-service listen ${schema}`;
    const admin = new pg.Client({ connectionString: PG_BASE_URL });
    await admin.connect();
    const listeners = async () =>
      (
        await admin.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
          [name],
        )
      ).rows.map((r) => r.pid);
    const reader = await connectSse(`${apps[1]!.url}/api/events?room=reconnect`);
    try {
      const before = await listeners();
      assert.equal(before.length, INSTANCES, 'one LISTEN connection per instance');
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [before]);
      // Written while the other instances are not listening: the notification is lost for them.
      const message = await createMessage(apps[0]!, { content: 'while deaf', room: 'reconnect' });
      await reader.waitFor((c) => changeEvents(c).length === 1, 'the change on another instance');
      assert.deepEqual(changeEvents(reader)[0]!.data, message);
      let after: number[] = [];
      await eventually(
        () => after.length === INSTANCES,
        'every instance listening again',
        10_000,
        async () => {
          after = await listeners();
        },
      );
      assert.ok(after.every((pid) => !before.includes(pid)));
    } finally {
      reader.close();
      await admin.end();
    }
  });
});
