/**
 * GET /api/events over a real socket, on every engine: framing and headers,
 * the three change kinds, resume by Last-Event-ID and by ?since (no gap, no
 * duplicate), the room filter with heartbeat ids, reset, disconnect cleanup,
 * the stream caps (per instance and per client), and shutdown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CHANGE_KINDS } from '../../src/domain/change.ts';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { AUTH, bearer, token } from '../auth/tokens.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  assertStrictlyIncreasing,
  createMessage,
  deleteMessage,
  eventSeq,
  eventually,
  updateMessage,
} from './event-helpers.ts';
import { changeEvents, connectSse, type SseClient } from './sse-client.ts';

const HEARTBEAT_MS = 100;

for (const engine of engines) {
  describe(`event stream (${engine.name})`, async () => {
    const skip = await skipUnlessEngine(engine);
    let t: TestApp;
    const clients: SseClient[] = [];
    const open = async (path: string, headers?: Record<string, string>) => {
      const client = await connectSse(`${t.url}${path}`, { headers });
      clients.push(client);
      return client;
    };

    before(async () => {
      if (skip) return;
      t = await startTestApp(engine, { eventsHeartbeatMs: HEARTBEAT_MS });
      await t.listen();
    });
    after(async () => {
      for (const client of clients) client.close();
      await t?.close();
    });

    it('flushes headers and a retry hint at once, then frames each change', { skip }, async () => {
      // A client that accepts compression still gets the stream as is: nothing buffers it.
      const stream = await open('/api/events', { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['content-type'], 'text/event-stream');
      assert.equal(stream.headers['cache-control'], 'no-cache, no-transform');
      assert.equal(stream.headers['x-accel-buffering'], 'no');
      assert.equal(stream.headers['content-encoding'], undefined);
      // Before any change exists for it, the stream has already said something.
      await stream.waitFor((c) => c.retry !== undefined, 'the retry hint');
      assert.ok(stream.retry! > 0);

      const hostile = 'line one\r\nid: 999999\nevent: message.deleted\rdata: {}\n\nretry: 1';
      const message = await createMessage(t, { content: hostile, room: 'framing' });
      await stream.waitFor((c) => changeEvents(c).length === 1, 'the created event');
      const [event] = changeEvents(stream);
      assert.equal(event!.event, 'message.created');
      assert.deepEqual(event!.data, message);
      assert.equal(event!.seq, await eventSeq(t));
      // Only numbers and known kinds ever start an id:/event: line; no line of the content leaked.
      const lines = stream.raw.split(/\r\n|\n|\r/);
      for (const line of lines.filter((l) => l.startsWith('id:'))) assert.match(line, /^id: \d+$/);
      for (const line of lines.filter((l) => l.startsWith('event:'))) {
        assert.ok(
          CHANGE_KINDS.some((kind) => line === `event: ${kind}`),
          line,
        );
      }
      assert.equal(lines.filter((l) => l.startsWith('retry:')).length, 1);
      assert.equal(stream.retry, Number(lines.find((l) => l.startsWith('retry:'))!.slice(7)));
    });

    it(
      'sends created, updated, deleted in order; a no-op PUT sends nothing',
      { skip },
      async () => {
        const stream = await open('/api/events?room=kinds');
        const created = await createMessage(t, { content: 'first', room: 'kinds' });
        await updateMessage(t, created.id, 'first'); // same content: no change, no event
        const updated = await updateMessage(t, created.id, 'second');
        const deleted = await deleteMessage(t, created.id);
        assert.deepEqual(deleted, updated);
        await stream.waitFor((c) => changeEvents(c).length === 3, 'three events');
        const events = changeEvents(stream);
        assert.deepEqual(
          events.map((e) => e.event),
          ['message.created', 'message.updated', 'message.deleted'],
        );
        assert.deepEqual(events[0]!.data, created);
        assert.deepEqual(events[1]!.data, updated);
        // The delete carries the message as it was when deleted.
        assert.deepEqual(events[2]!.data, updated);
        assertStrictlyIncreasing(
          events.map((e) => e.seq),
          'event ids',
        );
      },
    );

    it(
      'resumes after Last-Event-ID and after ?since with no gap and no duplicate',
      { skip },
      async () => {
        const live = await open('/api/events?room=resume');
        const written = [];
        for (let i = 0; i < 6; i++) {
          written.push(await createMessage(t, { content: `m${i}`, room: 'resume' }));
        }
        await live.waitFor((c) => changeEvents(c).length === 6, 'six live events');
        const seqs = changeEvents(live).map((e) => e.seq);
        const from = seqs[1]!;

        const byHeader = await open('/api/events?room=resume', { 'last-event-id': String(from) });
        const bySince = await open(`/api/events?room=resume&since=${from}`);
        // Both now replay the past and then go live: write more while they do.
        for (let i = 6; i < 9; i++) {
          written.push(await createMessage(t, { content: `m${i}`, room: 'resume' }));
        }
        await live.waitFor((c) => changeEvents(c).length === 9, 'nine live events');
        const all = changeEvents(live).map((e) => e.seq);
        const expected = all.filter((s) => s > from);
        for (const [name, client] of [
          ['Last-Event-ID', byHeader],
          ['since', bySince],
        ] as const) {
          await client.waitFor(
            (c) => changeEvents(c).length >= expected.length,
            `${name}: ${expected.length} events`,
          );
          const got = changeEvents(client);
          assert.deepEqual(
            got.map((e) => e.seq),
            expected,
            `${name} resumes exactly after ${from}`,
          );
          assert.deepEqual(
            got.map((e) => e.data.id),
            written.slice(2).map((m) => m.id),
          );
        }
        assertStrictlyIncreasing(all, 'live ids');
      },
    );

    it('lets Last-Event-ID win over ?since, and names what is malformed', { skip }, async () => {
      const first = await createMessage(t, { content: 'a', room: 'wins' });
      const afterFirst = await eventSeq(t);
      const second = await createMessage(t, { content: 'b', room: 'wins' });
      const latest = await eventSeq(t);
      const both = await open(`/api/events?room=wins&since=0`, {
        'last-event-id': String(afterFirst),
      });
      await both.waitFor((c) => changeEvents(c).length === 1, 'the one change after the header');
      assert.deepEqual(changeEvents(both)[0]!.data, second);
      assert.notDeepEqual(changeEvents(both)[0]!.data, first);

      // A malformed ?since is ignored when the header is there.
      const ignored = await open(`/api/events?room=wins&since=nope`, {
        'last-event-id': String(latest),
      });
      assert.equal(ignored.status, 200);

      const badHeader = await open(`/api/events?since=1`, { 'last-event-id': '12abc' });
      assert.equal(badHeader.status, 400);
      assert.match(String(badHeader.headers['content-type']), /^application\/problem\+json/);
      const problem = JSON.parse(await badHeader.body());
      assert.equal(problem.type, '/problems/validation');
      assert.deepEqual(
        problem.errors.map((e: { header?: string }) => e.header),
        ['last-event-id'],
      );

      for (const since of ['-1', '1.5', 'abc', '99999999999999999999', '']) {
        const bad = await open(`/api/events?since=${encodeURIComponent(since)}`);
        assert.equal(bad.status, 400, `since=${since}`);
        const body = JSON.parse(await bad.body());
        assert.deepEqual(
          body.errors.map((e: { parameter?: string }) => e.parameter),
          ['since'],
        );
      }
      const badRoom = await open('/api/events?room=no%20spaces');
      assert.equal(badRoom.status, 400);
      const roomProblem = JSON.parse(await badRoom.body());
      assert.deepEqual(
        roomProblem.errors.map((e: { parameter?: string }) => e.parameter),
        ['room'],
      );
    });

    it(
      'filters by room; heartbeats carry the latest id and dispatch nothing',
      { skip },
      async () => {
        // Both rooms exist before the stream opens: it then sees messages only.
        await createMessage(t, { content: 'first', room: 'quiet' });
        await createMessage(t, { content: 'first', room: 'loud' });
        const stream = await open('/api/events?room=quiet');
        const mine = await createMessage(t, { content: 'mine', room: 'quiet' });
        for (let i = 0; i < 3; i++) await createMessage(t, { content: `other ${i}`, room: 'loud' });
        const latest = await eventSeq(t);
        await stream.waitFor((c) => c.lastEventId === String(latest), `last event id ${latest}`);
        await stream.waitFor((c) => c.comments.includes('heartbeat'), 'a heartbeat comment');
        const events = changeEvents(stream);
        assert.deepEqual(
          events.map((e) => e.data),
          [mine],
        );
        assert.equal(stream.events.length, 1, 'an id-only frame dispatches no event');
        // The id moved past the other room's changes without any of them being sent.
        assert.ok(latest > events[0]!.seq);
        assert.ok(stream.ids.includes(String(latest)));

        // An EventSource reconnecting with that id misses nothing of its room.
        const resumeFrom = stream.lastEventId;
        stream.close();
        const later = await createMessage(t, { content: 'later', room: 'quiet' });
        const resumed = await open('/api/events?room=quiet', { 'last-event-id': resumeFrom });
        await resumed.waitFor((c) => changeEvents(c).length === 1, 'the later message');
        assert.deepEqual(changeEvents(resumed)[0]!.data, later);
      },
    );

    it(
      'a stream opened without an id learns the latest from its first heartbeat, and can resume from it',
      { skip },
      async () => {
        await createMessage(t, { content: 'before', room: 'hushed' });
        const latest = await eventSeq(t);
        // A quiet room: nothing of it, nor anything else, happens while the stream is open.
        const stream = await open('/api/events?room=hushed');
        await stream.waitFor((c) => c.comments.includes('heartbeat'), 'a heartbeat');
        await stream.waitFor((c) => c.lastEventId === String(latest), `last event id ${latest}`);
        assert.equal(stream.events.length, 0, 'the id came with no event');
        const resumeFrom = stream.lastEventId;
        stream.close();
        const missed = await createMessage(t, { content: 'while away', room: 'hushed' });
        const resumed = await open('/api/events?room=hushed', { 'last-event-id': resumeFrom });
        await resumed.waitFor((c) => changeEvents(c).length === 1, 'the message made while away');
        assert.deepEqual(changeEvents(resumed)[0]!.data, missed);
      },
    );

    it('sends a heartbeat comment on an idle unfiltered stream', { skip }, async () => {
      const stream = await open('/api/events');
      await stream.waitFor(
        (c) => c.comments.filter((x) => x === 'heartbeat').length >= 2,
        'two heartbeats',
      );
      assert.equal(stream.events.length, 0);
    });

    it('resets when since is ahead of the latest change, then goes live', { skip }, async () => {
      const latest = await eventSeq(t);
      const stream = await open(`/api/events?since=${latest + 1000}`);
      await stream.waitFor((c) => c.events.length === 1, 'the reset');
      assert.deepEqual(stream.events[0], {
        id: String(latest),
        event: 'reset',
        data: JSON.stringify({ latest, reason: 'ahead' }),
      });
      const message = await createMessage(t, { content: 'after reset', room: 'reset' });
      await stream.waitFor((c) => changeEvents(c).length === 1, 'a live event');
      assert.deepEqual(changeEvents(stream)[0]!.data, message);
      assert.ok(changeEvents(stream)[0]!.seq > latest);
    });

    it('removes its listener when the client goes away', { skip }, async () => {
      for (const client of clients) client.close();
      await eventually(() => t.app.feed.subscriberCount === 0, 'earlier streams released');
      const before = t.app.feed.subscriberCount;
      const streams = await Promise.all([1, 2, 3].map(() => connectSse(`${t.url}/api/events`)));
      await eventually(() => t.app.feed.subscriberCount === before + 3, 'three subscribers');
      for (const s of streams) s.close();
      await eventually(() => t.app.feed.subscriberCount === before, 'the listeners removed');
      assert.equal(t.app.feed.subscriberCount, before);
    });

    it('is documented in the OpenAPI document', { skip }, async () => {
      const doc = (await t.app.http.inject({ url: '/api/openapi.json' })).json();
      const op = doc.paths['/api/events'].get;
      assert.deepEqual(op.tags, ['events']);
      assert.ok(op.responses['200'].content['text/event-stream']);
      for (const status of ['400', '503']) {
        assert.ok(op.responses[status].content['application/problem+json'], status);
      }
      const names = op.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`);
      for (const name of ['query:room', 'query:since', 'header:last-event-id']) {
        assert.ok(names.includes(name), name);
      }
    });

    it('answers HEAD with 405 rather than an endless stream', { skip }, async () => {
      const response = await fetch(`${t.url}/api/events`, { method: 'HEAD' });
      assert.equal(response.status, 405);
      assert.match(response.headers.get('allow') ?? '', /GET/);
    });
  });

  describe(`event stream limits (${engine.name})`, async () => {
    const skip = await skipUnlessEngine(engine);

    it('resets when since is older than the log keeps', { skip }, async () => {
      const t = await startTestApp(engine, { eventsHeartbeatMs: HEARTBEAT_MS });
      const clients: SseClient[] = [];
      try {
        await t.listen();
        for (let i = 0; i < 4; i++) await createMessage(t, { content: `old ${i}` });
        // Everything but the newest change is older than this cut-off.
        await t.app.store.changes.purge(new Date(Date.now() + 3_600_000));
        const bounds = await t.app.store.changes.bounds();
        assert.ok(bounds.purgedThrough > 1, 'the purge removed changes');
        const stale = await connectSse(`${t.url}/api/events?since=1`);
        clients.push(stale);
        await stale.waitFor((c) => c.events.length === 1, 'the reset');
        assert.deepEqual(stale.events[0], {
          id: String(bounds.latest),
          event: 'reset',
          data: JSON.stringify({ latest: bounds.latest, reason: 'purged' }),
        });
        // Resuming from exactly what the log still follows on is no reset.
        const fresh = await connectSse(`${t.url}/api/events`, {
          headers: { 'last-event-id': String(bounds.purgedThrough) },
        });
        clients.push(fresh);
        await fresh.waitFor((c) => changeEvents(c).length === 1, 'the kept change');
        assert.equal(fresh.events.length, 1);
        assert.equal(changeEvents(fresh)[0]!.seq, bounds.latest);
      } finally {
        for (const c of clients) c.close();
        await t.close();
      }
    });

    it(
      'caps open streams per client address with a 429 and Retry-After; other clients still get theirs',
      { skip },
      async () => {
        const t = await startTestApp(engine, {
          eventsHeartbeatMs: HEARTBEAT_MS,
          eventsMaxStreamsPerClient: 2,
        });
        const clients: SseClient[] = [];
        const from = async (localAddress: string) => {
          const client = await connectSse(`${t.url}/api/events`, { localAddress });
          clients.push(client);
          return client;
        };
        try {
          await t.listen();
          const first = await from('127.0.0.1');
          assert.equal(first.status, 200);
          assert.equal((await from('127.0.0.1')).status, 200);
          const over = await from('127.0.0.1');
          await assertOverClientCap(over);
          assert.equal((await from('127.0.0.2')).status, 200, 'another address is another client');
          first.close();
          await eventually(
            () => t.app.http.eventStreams().open === 2,
            'the closed stream released',
          );
          assert.equal((await from('127.0.0.1')).status, 200, 'a released slot can be taken again');
        } finally {
          for (const c of clients) c.close();
          await t.close();
        }
      },
    );

    it('with auth on, caps open streams per token subject', { skip }, async () => {
      const t = await startTestApp(engine, {
        ...AUTH,
        eventsHeartbeatMs: HEARTBEAT_MS,
        eventsMaxStreamsPerClient: 2,
      });
      const clients: SseClient[] = [];
      const as = async (sub: string) => {
        const client = await connectSse(`${t.url}/api/events`, {
          headers: bearer(await token({ sub })),
        });
        clients.push(client);
        return client;
      };
      try {
        await t.listen();
        assert.equal((await as('ada')).status, 200);
        assert.equal((await as('ada')).status, 200);
        await assertOverClientCap(await as('ada'));
        assert.equal((await as('bob')).status, 200, 'the same address, another subject');
      } finally {
        for (const c of clients) c.close();
        await t.close();
      }
    });

    it(
      'caps open streams with a 503 and Retry-After, and ends streams on close',
      { skip },
      async () => {
        const t = await startTestApp(engine, {
          eventsHeartbeatMs: HEARTBEAT_MS,
          eventsMaxStreams: 2,
        });
        const clients: SseClient[] = [];
        let closed = false;
        try {
          await t.listen();
          const first = await connectSse(`${t.url}/api/events`);
          const second = await connectSse(`${t.url}/api/events`);
          clients.push(first, second);
          const third = await connectSse(`${t.url}/api/events`);
          clients.push(third);
          assert.equal(third.status, 503);
          assert.ok(Number(third.headers['retry-after']) > 0);
          const problem = JSON.parse(await third.body());
          assert.equal(problem.status, 503);
          first.close();
          await eventually(() => t.app.feed.subscriberCount === 1, 'the closed stream released');
          const fourth = await connectSse(`${t.url}/api/events`);
          clients.push(fourth);
          assert.equal(fourth.status, 200);

          // Shutting down ends the open streams instead of waiting for them forever.
          await t.close();
          closed = true;
          await second.waitFor((c) => c.ended, 'the stream to end');
          await fourth.waitFor((c) => c.ended, 'the stream to end');
          assert.equal(t.app.feed.subscriberCount, 0);
        } finally {
          for (const c of clients) c.close();
          if (!closed) await t.close();
        }
      },
    );
  });
}

async function assertOverClientCap(client: SseClient): Promise<void> {
  assert.equal(client.status, 429);
  assert.ok(Number(client.headers['retry-after']) > 0, 'Retry-After');
  assert.equal(client.headers['ratelimit-policy'], '"events";q=2;qu="concurrency"');
  assert.equal(client.headers.ratelimit, '"events";r=0');
  assert.match(String(client.headers['content-type']), /^application\/problem\+json/);
  const problem = JSON.parse(await client.body()) as { type: string; status: number };
  assert.equal(problem.type, '/problems/rate-limited');
  assert.equal(problem.status, 429);
}
