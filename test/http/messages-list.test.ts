/** GET /api/messages: every message oldest first, the listing parameters, Link paging, Event-Seq, streaming. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { Message } from '../../src/domain/message.ts';
import { STREAM_BATCH_SIZE } from '../../src/domain/message-service.ts';
import {
  assertProblem,
  eachEngine,
  onlyError,
  uniqueRoom,
  withApp,
  withWrappedStore,
  type ContractApp,
} from './http-contract.ts';

const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);

/** Follows Link rel="next" from `url` to the end; every page checked against the document. */
async function walk(
  app: ContractApp,
  url: string,
): Promise<{ pages: Message[][]; urls: string[] }> {
  const pages: Message[][] = [];
  const urls: string[] = [];
  let next: string | undefined = url;
  for (let guard = 0; next !== undefined; guard += 1) {
    assert.ok(guard < 1000, 'paging ends');
    urls.push(next);
    const response = await app.inject({ url: next });
    assert.equal(response.statusCode, 200, response.body);
    pages.push(response.json());
    const link = response.headers.link as string | undefined;
    if (link === undefined) break;
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    assert.ok(match, `Link is <url>; rel="next": ${link}`);
    next = match[1];
  }
  return { pages, urls };
}

eachEngine('GET /api/messages', (engine, shared) => {
  /** `count` messages in a room of their own, oldest first. */
  async function seedRoom(count: number, room = uniqueRoom()): Promise<Message[]> {
    const out: Message[] = [];
    for (let i = 0; i < count; i += 1) out.push(await shared().create({ room, content: `m${i}` }));
    return out;
  }

  it('no query: every stored message, oldest first, as a JSON array', async () => {
    await withApp(engine, async (app) => {
      const empty = await app.inject({ url: '/api/messages' });
      assert.equal(empty.statusCode, 200);
      assert.match(String(empty.headers['content-type']), /^application\/json; charset=utf-8$/);
      assert.deepEqual(empty.json(), []);
      const created: Message[] = [];
      for (const room of ['a', 'b', 'a', 'c', 'b']) created.push(await app.create({ room }));
      const list = await app.inject({ url: '/api/messages' });
      assert.deepEqual(list.json(), created);
    });
  });

  it('Event-Seq is the last committed change, for every list, filtered too', async () => {
    await withApp(engine, async (app) => {
      const seq = async (url: string) => (await app.inject({ url })).headers['event-seq'] as string;
      assert.equal(await seq('/api/messages'), '0');
      const a = await app.create({ room: 'general' });
      await app.create({ room: 'general' });
      assert.equal(await seq('/api/messages'), '2');
      // A message to a new room also creates the room and its owner: three more changes.
      await app.create({ room: 'b' });
      assert.equal(await seq('/api/messages'), '5');
      await app.inject({ method: 'PUT', url: `/api/messages/${a.id}`, payload: { content: 'e' } });
      await app.inject({ method: 'PUT', url: `/api/messages/${a.id}`, payload: { content: 'e' } });
      await app.inject({ method: 'DELETE', url: `/api/messages/${a.id}` });
      for (const url of [
        '/api/messages',
        '/api/messages?room=b',
        '/api/messages?room=zzz',
        '/api/messages?limit=1&order=desc',
        `/api/messages?id=${a.id}`,
      ]) {
        assert.equal(await seq(url), '7', url);
      }
    });
  });

  it('room: only that room', async () => {
    const mine = await seedRoom(3);
    await seedRoom(2);
    const response = await shared().inject({ url: `/api/messages?room=${mine[0]!.room}` });
    assert.deepEqual(response.json(), mine);
  });

  it('limit: at most that many; order desc: newest first', async () => {
    const mine = await seedRoom(6);
    const room = mine[0]!.room;
    const asc = await shared().inject({ url: `/api/messages?room=${room}&limit=4` });
    assert.deepEqual(ids(asc.json()), ids(mine.slice(0, 4)));
    const desc = await shared().inject({ url: `/api/messages?room=${room}&order=desc&limit=4` });
    assert.deepEqual(ids(desc.json()), ids(mine.slice(2)).reverse());
    const all = await shared().inject({ url: `/api/messages?room=${room}&order=desc` });
    assert.deepEqual(ids(all.json()), ids(mine).reverse());
    const explicit = await shared().inject({ url: `/api/messages?room=${room}&order=asc` });
    assert.deepEqual(ids(explicit.json()), ids(mine));
  });

  it('limit 1 and 1000 are accepted', async () => {
    const mine = await seedRoom(2);
    for (const limit of [1, 1000]) {
      const response = await shared().inject({
        url: `/api/messages?room=${mine[0]!.room}&limit=${limit}`,
      });
      assert.equal(response.json().length, Math.min(limit, 2));
    }
  });

  it('after and before are exclusive bounds, in either order, combinable', async () => {
    const mine = await seedRoom(8);
    const room = mine[0]!.room;
    const [a, b] = [mine[1]!.id, mine[6]!.id];
    const get = async (query: string) =>
      ids((await shared().inject({ url: `/api/messages?room=${room}&${query}` })).json());
    assert.deepEqual(await get(`after=${a}`), ids(mine.slice(2)));
    assert.deepEqual(await get(`before=${b}`), ids(mine.slice(0, 6)));
    assert.deepEqual(await get(`after=${a}&before=${b}`), ids(mine.slice(2, 6)));
    assert.deepEqual(
      await get(`after=${a}&before=${b}&order=desc`),
      ids(mine.slice(2, 6)).reverse(),
    );
    assert.deepEqual(await get(`after=${a}&before=${b}&order=desc&limit=2`), [
      mine[5]!.id,
      mine[4]!.id,
    ]);
    assert.deepEqual(await get(`after=${a.toUpperCase()}&limit=1`), [mine[2]!.id]);
  });

  it('the latest N of a room, newest first, then scroll back with before=', async () => {
    const mine = await seedRoom(7);
    const room = mine[0]!.room;
    const latest = (
      await shared().inject({ url: `/api/messages?room=${room}&order=desc&limit=3` })
    ).json();
    assert.deepEqual(ids(latest), ids(mine.slice(4)).reverse());
    const back = (
      await shared().inject({
        url: `/api/messages?room=${room}&order=desc&limit=3&before=${latest[2].id}`,
      })
    ).json();
    assert.deepEqual(ids(back), ids(mine.slice(1, 4)).reverse());
  });

  it('a bound id that is well formed but not stored still works as a bound', async () => {
    const mine = await seedRoom(3);
    const room = mine[0]!.room;
    const newer = uuidv7();
    const get = async (query: string) =>
      ids((await shared().inject({ url: `/api/messages?room=${room}&${query}` })).json());
    assert.deepEqual(await get(`before=${newer}`), ids(mine));
    assert.deepEqual(await get(`after=${newer}`), []);
    assert.deepEqual(await get('after=00000000-0000-0000-0000-000000000000'), ids(mine));
    assert.deepEqual(
      await get('before=FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF&order=desc'),
      ids(mine).reverse(),
    );
  });

  it('id: repeatable, any case, unknown ones absent, returned lowercase, in order', async () => {
    const mine = await seedRoom(5);
    const query = [mine[3]!.id.toUpperCase(), uuidv7(), mine[0]!.id, mine[3]!.id]
      .map((id) => `id=${id}`)
      .join('&');
    const response = await shared().inject({ url: `/api/messages?${query}` });
    assert.deepEqual(response.json(), [mine[0], mine[3]]);
    const desc = await shared().inject({ url: `/api/messages?${query}&order=desc&limit=1` });
    assert.deepEqual(desc.json(), [mine[3]]);
  });

  it('id: at most 100', async () => {
    const hundred = Array.from({ length: 100 }, () => `id=${uuidv7()}`);
    const ok = await shared().inject({ url: `/api/messages?${hundred.join('&')}` });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), []);
    const tooMany = await shared().inject({
      url: `/api/messages?${[...hundred, `id=${uuidv7()}`].join('&')}`,
    });
    assert.equal(onlyError(assertProblem(tooMany, 400, 'validation')).parameter, 'id');
  });

  it('every parameter combined', async () => {
    const mine = await seedRoom(6);
    await seedRoom(2);
    const room = mine[0]!.room;
    const query = [
      `room=${room}`,
      'order=desc',
      'limit=2',
      `after=${mine[0]!.id}`,
      `before=${mine[5]!.id}`,
      ...[1, 2, 4].map((i) => `id=${mine[i]!.id}`),
    ].join('&');
    const response = await shared().inject({ url: `/api/messages?${query}` });
    assert.deepEqual(ids(response.json()), [mine[4]!.id, mine[2]!.id]);
    assert.ok(response.headers.link, 'one more page');
  });

  it('unknown query parameters are ignored', async () => {
    const mine = await seedRoom(2);
    const response = await shared().inject({
      url: `/api/messages?room=${mine[0]!.room}&sort=nope&page=2&limit[x]=1`,
    });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), mine);
  });

  it('a malformed parameter is a 400 naming it', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1e400', 'limit'],
      ['limit=', 'limit'],
      ['order=up', 'order'],
      ['order=ASC', 'order'],
      ['after=nope', 'after'],
      ['before=123', 'before'],
      ['room=bad%20room', 'room'],
      [`room=${'x'.repeat(65)}`, 'room'],
      ['room=', 'room'],
      ['id=nope', 'id'],
      ['id=00000000-0000-7000-8000-00000000000g', 'id'],
    ];
    for (const [query, parameter] of cases) {
      const response = await shared().inject({ url: `/api/messages?${query}` });
      const problem = assertProblem(response, 400, 'validation');
      assert.equal(onlyError(problem).parameter, parameter, query);
    }
  });

  it('Link rel="next" only when limit cut the page short, in the same order', async () => {
    const mine = await seedRoom(4);
    const room = mine[0]!.room;
    const cut = await shared().inject({ url: `/api/messages?room=${room}&limit=3` });
    assert.match(String(cut.headers.link), /^<\/api\/messages\?[^>]+>; rel="next"$/);
    const whole = await shared().inject({ url: `/api/messages?room=${room}&limit=4` });
    assert.equal(whole.headers.link, undefined, 'exactly limit left: no next page');
    const noLimit = await shared().inject({ url: `/api/messages?room=${room}` });
    assert.equal(noLimit.headers.link, undefined);
  });

  for (const order of ['asc', 'desc'] as const) {
    it(`Link paging walks a room's whole history once, ${order}`, async () => {
      const mine = await seedRoom(13);
      const room = mine[0]!.room;
      const { pages, urls } = await walk(
        shared(),
        `/api/messages?room=${room}&limit=5&order=${order}`,
      );
      assert.deepEqual(
        pages.map((p) => p.length),
        [5, 5, 3],
      );
      const expected = order === 'asc' ? ids(mine) : ids(mine).reverse();
      assert.deepEqual(ids(pages.flat()), expected);
      for (const url of urls.slice(1)) {
        const params = new URL(url, 'http://x').searchParams;
        assert.equal(params.get('room'), room);
        assert.equal(params.get('limit'), '5');
        assert.equal(params.get('order') ?? 'asc', order);
      }
    });

    it(`Link paging walks the whole history of every room, ${order}, with a bound`, async () => {
      await withApp(engine, async (app) => {
        const created: Message[] = [];
        for (let i = 0; i < 12; i += 1) created.push(await app.create({ room: `r${i % 3}` }));
        const { pages } = await walk(app, `/api/messages?limit=4&order=${order}`);
        assert.deepEqual(
          pages.map((p) => p.length),
          [4, 4, 4],
          'a last full page has no next link',
        );
        assert.deepEqual(
          ids(pages.flat()),
          order === 'asc' ? ids(created) : ids(created).reverse(),
        );
        // A bound on the other side is kept on every next link.
        const bound = order === 'asc' ? `before=${created[10]!.id}` : `after=${created[1]!.id}`;
        const bounded = await walk(app, `/api/messages?limit=3&order=${order}&${bound}`);
        const inside = created.slice(order === 'asc' ? 0 : 2, order === 'asc' ? 10 : 12);
        assert.deepEqual(
          ids(bounded.pages.flat()),
          order === 'asc' ? ids(inside) : ids(inside).reverse(),
        );
        // The ids filter is kept too.
        const some = [0, 4, 5, 9].map((i) => created[i]!);
        const filtered = await walk(
          app,
          `/api/messages?limit=1&order=${order}&${some.map((m) => `id=${m.id}`).join('&')}`,
        );
        assert.deepEqual(
          ids(filtered.pages.flat()),
          order === 'asc' ? ids(some) : ids(some).reverse(),
        );
      });
    });
  }

  it('a large list streams in batches: every message once, in order, both orders', async () => {
    await withApp(engine, async (app) => {
      const count = STREAM_BATCH_SIZE * 5;
      const seeded: Message[] = [];
      const store = app.t.app.store.messages;
      for (let chunk = 0; chunk < count; chunk += 250) {
        const inputs = Array.from({ length: 250 }, (_, i) => ({
          id: uuidv7(),
          room: (chunk + i) % 3 === 0 ? 'third' : 'rest',
          author: 'bulk',
          content: `message ${chunk + i}`,
          createdAt: new Date().toISOString(),
        }));
        seeded.push(...(await Promise.all(inputs.map((m) => store.create(m)))));
      }
      const all = await app.fetch('/api/messages');
      assert.equal(all.response.status, 200);
      assert.equal(all.response.headers.get('transfer-encoding'), 'chunked', 'streamed');
      // Each of the two rooms came with its first message: room.created and member.added.
      assert.equal(all.response.headers.get('event-seq'), String(count + 4));
      const list = JSON.parse(all.body) as Message[];
      assert.equal(list.length, count);
      assert.deepEqual(list, seeded);

      const desc = JSON.parse((await app.fetch('/api/messages?order=desc')).body) as Message[];
      assert.deepEqual(ids(desc), ids(seeded).reverse());

      const third = JSON.parse((await app.fetch('/api/messages?room=third')).body) as Message[];
      assert.deepEqual(ids(third), ids(seeded.filter((m) => m.room === 'third')));

      const [low, high] = [seeded[100]!.id, seeded[2000]!.id];
      const bounded = JSON.parse(
        (await app.fetch(`/api/messages?after=${low}&before=${high}&order=desc`)).body,
      ) as Message[];
      assert.deepEqual(ids(bounded), ids(seeded.slice(101, 2000)).reverse());

      const page = await app.inject({ url: '/api/messages?limit=1000&order=desc' });
      assert.deepEqual(ids(page.json()), ids(seeded.slice(count - 1000)).reverse());
      assert.ok(page.headers.link);
    });
  });

  it('not a snapshot: writes during a streamed read; every untouched message once, in order', async () => {
    let calls = 0;
    let during: (() => Promise<void>) | undefined;
    await withWrappedStore(
      engine,
      (real) => ({
        messages: {
          list: async (query) => {
            calls += 1;
            // Between the first and the second batch of the read, others write.
            if (calls === 2 && during !== undefined) await during();
            return real.messages.list(query);
          },
        },
      }),
      async (app) => {
        const store = app.t.app.store.messages;
        const seeded = await Promise.all(
          Array.from({ length: STREAM_BATCH_SIZE * 2 + 50 }, (_, i) =>
            store.create({
              id: uuidv7(),
              room: 'general',
              author: 'bulk',
              content: `m${i}`,
              createdAt: new Date().toISOString(),
            }),
          ),
        );
        const touched = new Set([seeded[3]!.id, seeded[STREAM_BATCH_SIZE + 7]!.id]);
        const added: string[] = [];
        during = async () => {
          for (const id of touched) await store.delete(id, () => undefined);
          const fresh = await store.create({
            id: uuidv7(),
            room: 'general',
            author: 'late',
            content: 'written during the read',
            createdAt: new Date().toISOString(),
          });
          added.push(fresh.id);
        };
        calls = 0;
        const { body } = await app.fetch('/api/messages');
        const read = ids(JSON.parse(body) as Message[]);
        assert.equal(new Set(read).size, read.length, 'nothing twice');
        assert.deepEqual(read, [...read].sort(), 'in order');
        const readSet = new Set(read);
        for (const m of seeded) {
          if (!touched.has(m.id)) assert.ok(readSet.has(m.id), `untouched ${m.content} appears`);
        }
        for (const id of read) {
          assert.ok(
            seeded.some((m) => m.id === id) || added.includes(id),
            'only messages that existed at some point of the read',
          );
        }
      },
    );
  });

  it('a store failure after the first byte aborts the body before the closing bracket', async () => {
    let calls = 0;
    let failAfter = Number.POSITIVE_INFINITY;
    await withWrappedStore(
      engine,
      (real) => ({
        messages: {
          list: async (query) => {
            calls += 1;
            if (calls > failAfter) throw new Error('connection lost in the middle of a list');
            return real.messages.list(query);
          },
        },
      }),
      async (app) => {
        const store = app.t.app.store.messages;
        const inputs = Array.from({ length: STREAM_BATCH_SIZE + 10 }, (_, i) => ({
          id: uuidv7(),
          room: 'general',
          author: 'bulk',
          content: `m${i}`,
          createdAt: new Date().toISOString(),
        }));
        await Promise.all(inputs.map((m) => store.create(m)));
        await app.t.listen();
        calls = 0;
        failAfter = 1; // the first batch is sent, the second read fails
        const response = await fetch(`${app.t.url}/api/messages`);
        assert.equal(response.status, 200);
        const reader = response.body!.getReader();
        let text = '';
        const decoder = new TextDecoder();
        await assert.rejects(async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            text += decoder.decode(value, { stream: true });
          }
        }, 'the body does not end normally');
        assert.ok(text.startsWith('['));
        assert.ok(!text.trimEnd().endsWith(']'), 'no closing bracket');
        failAfter = Number.POSITIVE_INFINITY;
        const again = await app.inject({ url: '/api/messages' });
        assert.equal(again.json().length, STREAM_BATCH_SIZE + 10, 'the app still serves');
      },
    );
  });
});
