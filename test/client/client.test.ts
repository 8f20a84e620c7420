/**
 * The typed client package against a real server: the app listening on a free
 * port, on SQLite. Lost answers and dropped streams are made by a fetch that
 * passes every request to the server and then loses what comes back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createClient,
  nextLink,
  ProblemError,
  type Message,
  type MessageServiceClient,
  type StreamEvent,
} from '../../packages/client/src/index.ts';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

let server: TestApp;
let client: MessageServiceClient;

before(async () => {
  server = await startTestApp(sqliteEngine);
  client = createClient({ baseUrl: await server.listen() });
});
after(() => server.close());

async function create(content: string, room = 'client'): Promise<Message> {
  const { data, error } = await client.api.POST('/api/messages', {
    body: { author: 'ada', content, room },
  });
  assert.equal(error, undefined);
  return data!;
}

/** The next `count` events of a stream, then it is left. */
async function take(stream: AsyncGenerator<StreamEvent>, count: number): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (events.length === count) break;
  }
  return events;
}

describe('typed calls', () => {
  it('create, read and a problem, each typed by the document', async () => {
    const created = await create('typed');
    const { data, response } = await client.api.GET('/api/messages/{id}', {
      params: { path: { id: created.id } },
    });
    assert.equal(response.headers.get('etag'), '"1"');
    assert.deepEqual(data, created);

    const missing = await client.api.GET('/api/messages/{id}', {
      params: { path: { id: '00000000-0000-7000-8000-000000000000' } },
    });
    assert.equal(missing.data, undefined);
    assert.equal(missing.error?.type, '/problems/not-found');
    assert.equal(missing.error?.status, 404);
  });
});

describe('pages', () => {
  it('follows Link rel="next" until the last page, in order, every item once', async () => {
    const room = 'paged';
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create(`page ${i}`, room)).id);
    const first = client.api.GET('/api/messages', { params: { query: { room, limit: 2 } } });
    const seen: string[] = [];
    for await (const message of client.pages(first)) seen.push(message.id);
    assert.deepEqual(seen, made);

    const rooms: string[] = [];
    const firstRooms = client.api.GET('/api/rooms', { params: { query: { limit: 1 } } });
    for await (const r of client.pages(firstRooms)) rooms.push(r.name);
    assert.ok(rooms.includes('paged') && rooms.includes('client'), rooms.join());
  });

  it('reads a Link header with several relations', () => {
    const response = new Response(null, {
      headers: { link: '</a?after=1>; rel="prev", </a?after=9>; rel="next"' },
    });
    assert.equal(nextLink(response), '/a?after=9');
    assert.equal(nextLink(new Response(null)), undefined);
  });
});

describe('editMessage', () => {
  it('writes with If-Match on what it read', async () => {
    const message = await create('draft');
    const edited = await client.editMessage(message.id, (current) => `${current.content}, final`);
    assert.equal(edited.content, 'draft, final');
    assert.equal(edited.version, 2);
  });

  it('reads again and recomputes when someone else edited in between (412)', async () => {
    const message = await create('count: 0');
    let calls = 0;
    const edited = await client.editMessage(message.id, async (current) => {
      calls += 1;
      if (calls === 1) {
        // Another writer gets in between this read and this write.
        const other = await client.api.PUT('/api/messages/{id}', {
          params: { path: { id: message.id } },
          body: { content: 'count: 1' },
        });
        assert.equal(other.data?.version, 2);
      }
      return `count: ${Number(current.content.split(': ')[1]) + 1}`;
    });
    // The first write carried the ETag of version 1: a 412, then a fresh read of version 2.
    assert.equal(calls, 2);
    assert.equal(edited.content, 'count: 2');
    assert.equal(edited.version, 3);
  });

  it('throws the problem when the message is gone', async () => {
    const message = await create('to delete');
    await client.api.DELETE('/api/messages/{id}', { params: { path: { id: message.id } } });
    await assert.rejects(
      client.editMessage(message.id, () => 'x'),
      (error: unknown) => error instanceof ProblemError && error.problem?.status === 404,
    );
  });
});

describe('createMessage', () => {
  it('retries a create whose answer was lost under the same key: stored once', async () => {
    let lost = 0;
    const flaky = createClient({
      baseUrl: server.url,
      fetch: async (request) => {
        const response = await fetch(request);
        if (request.method === 'POST' && lost === 0) {
          lost += 1;
          await response.arrayBuffer();
          throw new TypeError('fetch failed: the connection was reset');
        }
        return response;
      },
    });
    const room = 'retried';
    const { message, replayed, idempotencyKey } = await flaky.createMessage({
      author: 'ada',
      content: 'once',
      room,
    });
    assert.equal(lost, 1);
    assert.equal(replayed, true);
    assert.match(idempotencyKey, /^[0-9a-f-]{36}$/);
    const { data } = await client.api.GET('/api/messages', { params: { query: { room } } });
    assert.deepEqual(data, [message]);
  });

  it('answers 201 on the first try, and a different body under the key is a 422', async () => {
    const first = await client.createMessage(
      { author: 'ada', content: 'keyed' },
      { idempotencyKey: 'client-test-key' },
    );
    assert.equal(first.replayed, false);
    await assert.rejects(
      client.createMessage(
        { author: 'ada', content: 'other' },
        { idempotencyKey: 'client-test-key' },
      ),
      (error: unknown) =>
        error instanceof ProblemError && error.problem?.type === '/problems/idempotency-key-reuse',
    );
  });
});

describe('events', () => {
  it("follows the stream from a list's Event-Seq: the changes after it, typed by event", async () => {
    const room = 'live';
    const { response } = await client.api.GET('/api/messages', { params: { query: { room } } });
    const since = response.headers.get('event-seq')!;
    const made = await create('hello live', room);
    const controller = new AbortController();
    const events = await take(
      client.events({ room, lastEventId: since, signal: controller.signal }),
      3,
    );
    controller.abort();
    // The first post to a new name creates the room, makes its author the owner, then the message.
    assert.deepEqual(
      events.map((e) => e.event),
      ['room.created', 'member.added', 'message.created'],
    );
    const last = events[2]!;
    assert.ok(last.event === 'message.created');
    assert.deepEqual(last.data, made);
    assert.ok(Number(last.id) > Number(since));
  });

  it('resumes with Last-Event-ID after a dropped connection: no gap, no repeat', async () => {
    const room = 'dropped';
    await create('before', room);
    const { response } = await client.api.GET('/api/messages', { params: { query: { room } } });
    const since = response.headers.get('event-seq')!;
    const first = await create('first', room);
    let connections = 0;
    const resumedFrom: (string | null)[] = [];
    const dropping = createClient({
      baseUrl: server.url,
      fetch: async (request) => {
        const answer = await fetch(request);
        if (!request.url.includes('/api/events')) return answer;
        connections += 1;
        resumedFrom.push(request.headers.get('last-event-id'));
        if (connections > 1) return answer;
        return new Response(cutAfterFirstEvent(answer.body!), answer);
      },
    });
    const stream = dropping.events({ room, lastEventId: since });
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (events.length === 1) await create('second', room);
      if (events.length === 2) break;
    }
    assert.equal(connections, 2);
    assert.deepEqual(resumedFrom, [since, events[0]!.id]);
    assert.deepEqual(
      events.map((e) => (e.event === 'message.created' ? e.data.content : e.event)),
      ['first', 'second'],
    );
    assert.equal(events[0]!.event === 'message.created' && events[0]!.data.id, first.id);
  });

  it('says reset when it cannot resume where asked, then goes on from the latest change', async () => {
    const room = 'reset';
    const controller = new AbortController();
    const stream = client.events({ room, lastEventId: 1e12, signal: controller.signal });
    const [reset] = await take(stream, 1);
    assert.ok(reset !== undefined && reset.event === 'reset');
    assert.equal(reset.data.reason, 'ahead');
    assert.equal(reset.id, String(reset.data.latest));

    const resumed = client.events({ room, lastEventId: reset.id, signal: controller.signal });
    const made = create('after the reset', room);
    const events = await take(resumed, 3);
    controller.abort();
    assert.equal(events.at(-1)?.event, 'message.created');
    assert.deepEqual(events.at(-1)?.data, await made);
  });

  it('throws the problem of an answer that waiting will not change', async () => {
    await assert.rejects(
      take(client.events({ lastEventId: 'not-a-number' }), 1),
      (error: unknown) => error instanceof ProblemError && error.status === 400,
    );
  });
});

/** A body that delivers the stream up to the end of its first event, then fails as a reset connection does. */
function cutAfterFirstEvent(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let text = '';
  return new ReadableStream({
    async pull(controller) {
      // Read until there is something to hand on: a pull that enqueues nothing is not called again.
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        text += new TextDecoder().decode(value);
        const start = text.indexOf('event: ');
        const end = start === -1 ? -1 : text.indexOf('\n\n', start);
        if (end !== -1) {
          controller.enqueue(new TextEncoder().encode(text.slice(0, end + 2)));
          await reader.cancel();
          controller.error(new TypeError('terminated: the connection was reset'));
          return;
        }
      }
    },
    cancel: () => reader.cancel(),
  });
}
