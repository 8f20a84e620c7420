/**
 * GET /api/messages?around=<id>: the page centred on a message, its two Link
 * relations in both orders, its combination with the other filters, and its
 * 400s, checked against a model of the rule on every engine.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { idAfter, idBefore } from '../../src/domain/around-page.ts';
import type { Message } from '../../src/domain/message.ts';
import {
  assertProblem,
  eachEngine,
  onlyError,
  uniqueRoom,
  type ContractApp,
} from './http-contract.ts';

type Order = 'asc' | 'desc';

const LOWEST = '00000000-0000-0000-0000-000000000000';
const HIGHEST = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** The rule, stated independently: ⌈n/2⌉ ids <= around, ⌊n/2⌋ ids > around, nearest, in order. */
function model(all: readonly string[], around: string, n: number, order: Order) {
  const sorted = [...all].sort();
  const low = sorted.filter((id) => id <= around).slice(-Math.ceil(n / 2));
  const high = sorted.filter((id) => id > around).slice(0, Math.floor(n / 2));
  const asc = [...low, ...high];
  const page = order === 'asc' ? asc : [...asc].reverse();
  // What lies beyond each end: after the last in the page's order, before the first.
  const lastBound = asc.length > 0 ? asc[asc.length - 1]! : around;
  const firstBound = asc.length > 0 ? asc[0]! : around;
  const later = sorted.some((id) => id > lastBound);
  const earlier = sorted.some((id) => (asc.length > 0 ? id < firstBound : id <= around));
  return {
    page,
    next: order === 'asc' ? later : earlier,
    prev: order === 'asc' ? earlier : later,
  };
}

/** `Link`'s relations, each as its URL. */
function links(header: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (header === undefined) return out;
  for (const part of String(header).split(', ')) {
    const match = /^<([^>]+)>; rel="(next|prev)"$/.exec(part);
    assert.ok(match, `a Link relation: ${part}`);
    assert.ok(!out.has(match[2]!), `one ${match[2]} relation`);
    out.set(match[2]!, match[1]!);
  }
  return out;
}

async function page(app: ContractApp, url: string) {
  const response = await app.inject({ url });
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  assert.match(String(response.headers['event-seq']), /^\d+$/);
  return {
    ids: (response.json() as Message[]).map((m) => m.id),
    links: links(response.headers.link),
  };
}

function params(url: string): URLSearchParams {
  return new URL(url, 'http://x').searchParams;
}

eachEngine('GET /api/messages?around=', (_engine, shared) => {
  async function seed(count: number, room = uniqueRoom()): Promise<Message[]> {
    const out: Message[] = [];
    for (let i = 0; i < count; i += 1) {
      out.push(await shared().create({ room, content: `m${i}` }));
    }
    return out;
  }

  it('every position, every small limit, both orders: the page and both links as the rule says', async () => {
    const app = shared();
    const room = uniqueRoom();
    const messages = await seed(7, room);
    // Another room's messages interleave in id order and must not count.
    await seed(2);
    const ids = messages.map((m) => m.id);
    const arounds = [
      ...ids,
      LOWEST,
      HIGHEST,
      idAfter(ids[2]!)!, // well formed, not stored, between two messages
      idBefore(ids[0]!)!,
    ];
    for (const around of arounds) {
      for (const n of [1, 2, 3, 4, 5, 9]) {
        for (const order of ['asc', 'desc'] as const) {
          const url = `/api/messages?room=${room}&around=${around}&limit=${n}&order=${order}`;
          const want = model(ids, around, n, order);
          const got = await page(app, url);
          assert.deepEqual(got.ids, want.page, url);
          assert.equal(got.links.has('next'), want.next, `next of ${url}`);
          assert.equal(got.links.has('prev'), want.prev, `prev of ${url}`);
        }
      }
    }
  });

  it('the links go on past the last and the first message, with the same filters and limit', async () => {
    const app = shared();
    const room = uniqueRoom();
    const ids = (await seed(9, room)).map((m) => m.id);
    for (const order of ['asc', 'desc'] as const) {
      const got = await page(
        app,
        `/api/messages?room=${room}&around=${ids[4]}&limit=4&order=${order}`,
      );
      const asc = ids.slice(3, 7);
      assert.deepEqual(got.ids, order === 'asc' ? asc : [...asc].reverse());
      const next = params(got.links.get('next')!);
      const prev = params(got.links.get('prev')!);
      for (const link of [next, prev]) {
        assert.equal(link.get('room'), room);
        assert.equal(link.get('limit'), '4');
        assert.equal(link.get('around'), null);
      }
      if (order === 'asc') {
        assert.deepEqual(
          [next.get('order'), next.get('after'), next.get('before')],
          ['asc', ids[6], null],
        );
        assert.deepEqual(
          [prev.get('order'), prev.get('before'), prev.get('after')],
          ['desc', ids[3], null],
        );
        assert.deepEqual((await page(app, got.links.get('next')!)).ids, ids.slice(7, 9));
        assert.deepEqual((await page(app, got.links.get('prev')!)).ids, ids.slice(0, 3).reverse());
      } else {
        assert.deepEqual(
          [next.get('order'), next.get('before'), next.get('after')],
          ['desc', ids[3], null],
        );
        assert.deepEqual(
          [prev.get('order'), prev.get('after'), prev.get('before')],
          ['asc', ids[6], null],
        );
        assert.deepEqual((await page(app, got.links.get('next')!)).ids, ids.slice(0, 3).reverse());
        assert.deepEqual((await page(app, got.links.get('prev')!)).ids, ids.slice(7, 9));
      }
    }
  });

  it('limit defaults to 50: 25 at or before the message, 25 after it, one page, never streamed', async () => {
    const app = shared();
    const room = uniqueRoom();
    const ids = (await seed(60, room)).map((m) => m.id);
    const got = await page(app, `/api/messages?room=${room}&around=${ids[30]}`);
    assert.deepEqual(got.ids, ids.slice(6, 56));
    // One body of known length: a list without limit would be streamed in chunks.
    const raw = await app.inject({ url: `/api/messages?room=${room}&around=${ids[30]}` });
    assert.equal(raw.headers['transfer-encoding'], undefined);
    assert.equal(Number(raw.headers['content-length']), Buffer.byteLength(raw.body));
    const streamed = await app.inject({ url: `/api/messages?room=${room}` });
    assert.equal(streamed.headers['transfer-encoding'], 'chunked');
    assert.equal(params(got.links.get('next')!).get('limit'), '50');
    assert.equal(params(got.links.get('prev')!).get('limit'), '50');
  });

  it('ids match case-insensitively', async () => {
    const app = shared();
    const room = uniqueRoom();
    const ids = (await seed(5, room)).map((m) => m.id);
    const lower = await page(app, `/api/messages?room=${room}&around=${ids[2]}&limit=3`);
    const upper = await page(
      app,
      `/api/messages?room=${room}&around=${ids[2]!.toUpperCase()}&limit=3`,
    );
    assert.deepEqual(upper.ids, lower.ids);
    assert.deepEqual(upper.ids, ids.slice(1, 4));
  });

  it('combines with q and id: the nearest among the messages that pass them', async () => {
    const app = shared();
    const room = uniqueRoom();
    const word = `w${uniqueRoom().slice(2)}`;
    const all: Message[] = [];
    for (let i = 0; i < 10; i += 1) {
      all.push(await app.create({ room, content: i % 2 === 0 ? `${word} ${i}` : `other ${i}` }));
    }
    const even = all.filter((_, i) => i % 2 === 0).map((m) => m.id);
    // Around an odd message (it does not match q): the nearest matching ones on each side.
    const searched = await page(app, `/api/messages?q=${word}&around=${all[5]!.id}&limit=4`);
    assert.deepEqual(searched.ids, model(even, all[5]!.id, 4, 'asc').page);
    assert.deepEqual(searched.ids, [even[1], even[2], even[3], even[4]]);
    assert.equal(params(searched.links.get('prev')!).get('q'), word);
    assert.equal(searched.links.has('next'), false);
    const some = [all[1]!.id, all[4]!.id, all[8]!.id, all[9]!.id];
    const listed = await page(
      app,
      `/api/messages?${some.map((id) => `id=${id}`).join('&')}&around=${all[6]!.id}&limit=2&order=desc`,
    );
    assert.deepEqual(listed.ids, [all[8]!.id, all[4]!.id]);
    assert.deepEqual(params(listed.links.get('next')!).getAll('id'), some);
  });

  it('without a room, every room the caller may read; a room with none gives an empty page and no links', async () => {
    const app = shared();
    const a = await app.create({ room: uniqueRoom() });
    const b = await app.create({ room: uniqueRoom() });
    const got = await page(app, `/api/messages?around=${a.id}&limit=2`);
    assert.deepEqual(got.ids, [a.id, b.id]);
    const beyond = await page(app, `/api/messages?room=${uniqueRoom()}&around=${a.id}`);
    assert.deepEqual(beyond.ids, []);
    assert.equal(beyond.links.size, 0);
  });

  it('a 400 naming around beside after or before, for a malformed or a repeated around', async () => {
    const app = shared();
    const m = await app.create({ room: uniqueRoom() });
    for (const url of [
      `/api/messages?around=${m.id}&after=${m.id}`,
      `/api/messages?around=${m.id}&before=${m.id}&order=desc`,
      `/api/messages?around=${m.id}&after=${LOWEST}&before=${HIGHEST}`,
      '/api/messages?around=not-an-id',
      `/api/messages?around=${m.id}&around=${m.id}`,
    ]) {
      const problem = assertProblem(await app.inject({ url }), 400, 'validation');
      assert.equal(onlyError(problem).parameter, 'around', url);
    }
  });
});
