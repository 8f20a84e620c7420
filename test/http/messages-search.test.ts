/** GET /api/messages?q=: the term rules (a 400 naming q), paging with Link, streaming, every other parameter, access, edits and deletes. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import { searchQuery, searchText } from '../../src/domain/search-text.ts';
import { AUTH, bearer, token } from '../auth/tokens.ts';
import {
  assertProblem,
  eachEngine,
  onlyError,
  uniqueRoom,
  withApp,
  type ContractApp,
} from './http-contract.ts';

const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id);

/** A word no other test's message holds. */
function uniqueWord(): string {
  return `w${randomBytes(5).toString('hex')}`;
}

function matching(messages: readonly Message[], q: string, inRoom: boolean): Message[] {
  const { terms } = searchQuery(q, inRoom);
  return messages.filter((m) => terms.every((t) => searchText(m.content).includes(t)));
}

/** Follows Link rel="next" from `url` to the end: every message, and every URL asked. */
async function walk(
  app: ContractApp,
  url: string,
): Promise<{ messages: Message[]; urls: string[] }> {
  const messages: Message[] = [];
  const urls: string[] = [];
  let next: string | undefined = url;
  while (next !== undefined) {
    assert.ok(urls.length < 100, 'paging ends');
    urls.push(next);
    const response = await app.inject({ url: next });
    assert.equal(response.statusCode, 200, response.body);
    messages.push(...(response.json() as Message[]));
    const link = response.headers.link as string | undefined;
    next = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
    if (link !== undefined) assert.ok(next, `Link is <url>; rel="next": ${link}`);
  }
  return { messages, urls };
}

const q = (text: string) => encodeURIComponent(text);

eachEngine('GET /api/messages?q=', (engine, shared) => {
  it('a q it cannot take is a 400 naming q, before any other check', async () => {
    const { inject } = shared();
    for (const [query, detail] of [
      ['q=', /fewer than 1 character|1-200/],
      [`q=${q(' \t ')}`, /blank/],
      [`q=${q('x'.repeat(201))}`, /more than 200 characters|1-200/],
      [`q=${q(Array.from({ length: 11 }, (_, i) => `term${i}`).join(' '))}`, /at most 10/],
      [`q=${q('ab c')}`, /at least 3/],
      [`q=${q('ﬁ')}`, /at least 3/],
      [`q=${q('abc\u0000')}`, /control/],
    ] as const) {
      const response = await inject({ url: `/api/messages?${query}` });
      const entry = onlyError(assertProblem(response, 400, 'validation'));
      assert.equal(entry.parameter, 'q', query);
      assert.match(entry.detail, detail, query);
    }
    // A repeated q is a repeated parameter.
    const twice = await inject({ url: '/api/messages?q=abc&q=def' });
    assert.equal(onlyError(assertProblem(twice, 400)).parameter, 'q');
    // 200 code points is still fine, 10 terms too, and short terms within a room.
    for (const query of [
      `q=${q('x'.repeat(200))}`,
      `q=${q(Array.from({ length: 10 }, (_, i) => `term${i}`).join(' '))}`,
      `q=${q('ab c')}&room=${uniqueRoom()}`,
      `q=${q('ab cde')}`,
    ]) {
      const response = await inject({ url: `/api/messages?${query}&limit=5` });
      assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    }
  });

  it('finds by the normalized content, every term, in id order; Link pages keep q', async () => {
    const app = shared();
    const room = uniqueRoom();
    const word = uniqueWord();
    const contents = [
      `${word} Straße`,
      `${word.toUpperCase()} strasse`,
      `nothing here`,
      `Ｆｕｌｌ ${word}`,
      `${word} oﬃce`,
      `${word}`,
      `${word} STRAẞE office`,
      `${word}-suffixed`,
    ];
    const created: Message[] = [];
    for (const content of contents) created.push(await app.create({ room, content }));
    for (const text of [
      word,
      `${word} straße`,
      `${word.toUpperCase()} STRAẞE`,
      'ｆｕｌｌ',
      `office ${word}`,
    ]) {
      const expected = matching(created, text, false);
      assert.ok(expected.length > 0, text);
      const all = await app.inject({ url: `/api/messages?q=${q(text)}` });
      assert.deepEqual(ids(all.json()), ids(expected), text);
      const desc = await walk(app, `/api/messages?q=${q(text)}&order=desc&limit=2`);
      assert.deepEqual(ids(desc.messages), ids(expected).reverse(), text);
      for (const url of desc.urls.slice(1)) {
        assert.equal(new URL(url, 'http://x').searchParams.get('q'), text);
      }
    }
    const asc = await walk(app, `/api/messages?q=${q(word)}&limit=3&room=${room}`);
    assert.deepEqual(ids(asc.messages), ids(matching(created, word, true)));
    assert.equal(asc.urls.length, 3);
  });

  it('without limit: every match streamed', async () => {
    const app = shared();
    const room = uniqueRoom();
    const word = uniqueWord();
    const created: Message[] = [];
    for (let i = 0; i < 30; i++) {
      created.push(
        await app.create({ room, content: i % 3 === 0 ? `${word} ${i}` : `other ${i}` }),
      );
    }
    const { response, body } = await app.fetch(`/api/messages?q=${q(word)}`);
    assert.equal(response.status, 200);
    assert.deepEqual(ids(JSON.parse(body) as Message[]), ids(matching(created, word, false)));
    const inRoom = await app.fetch(`/api/messages?q=${q('1')}&room=${room}&order=desc`);
    assert.deepEqual(
      ids(JSON.parse(inRoom.body) as Message[]),
      ids(matching(created, '1', true)).reverse(),
    );
  });

  it('combines with room, after, before, id and order', async () => {
    const app = shared();
    const [ops, dev] = [uniqueRoom(), uniqueRoom()];
    const word = uniqueWord();
    const created: Message[] = [];
    for (let i = 0; i < 16; i++) {
      created.push(
        await app.create({
          room: i % 2 === 0 ? ops : dev,
          content: i % 4 < 2 ? `${word} deploy ${i}` : `lunch ${i}`,
        }),
      );
    }
    const hits = matching(created, word, false);
    const get = async (query: string) => {
      const response = await app.inject({ url: `/api/messages?q=${q(word)}&${query}` });
      assert.equal(response.statusCode, 200, response.body);
      return ids(response.json() as Message[]);
    };
    const [a, b] = [created[2]!.id, created[13]!.id];
    assert.deepEqual(await get(`room=${ops}`), ids(hits.filter((m) => m.room === ops)));
    assert.deepEqual(await get(`room=${uniqueRoom()}`), []);
    assert.deepEqual(await get(`after=${a}`), ids(hits.filter((m) => m.id > a)));
    assert.deepEqual(
      await get(`before=${b}&order=desc`),
      ids(hits.filter((m) => m.id < b)).reverse(),
    );
    assert.deepEqual(
      await get(`room=${dev}&after=${a}&before=${b}`),
      ids(hits.filter((m) => m.room === dev && m.id > a && m.id < b)),
    );
    const picked = [created[0]!, created[2]!, created[5]!, created[9]!];
    assert.deepEqual(
      await get(picked.map((m) => `id=${m.id}`).join('&')),
      ids(picked.filter((m) => hits.includes(m))),
    );
  });

  it('an edit or a delete is reflected by the next search', async () => {
    const app = shared();
    const [before, after] = [uniqueWord(), uniqueWord()];
    const message = await app.create({ content: `first ${before}` });
    const search = async (word: string) =>
      ids((await app.inject({ url: `/api/messages?q=${word}` })).json() as Message[]);
    assert.deepEqual(await search(before), [message.id]);
    const edited = await app.inject({
      method: 'PUT',
      url: `/api/messages/${message.id}`,
      payload: { content: `then ${after}` },
    });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.deepEqual(await search(before), []);
    assert.deepEqual(await search(after), [message.id]);
    const deleted = await app.inject({ method: 'DELETE', url: `/api/messages/${message.id}` });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(await search(after), []);
  });

  it('with auth: a private room is searched only by its members', async () => {
    await withApp(
      engine,
      async (app) => {
        const [ada, bob] = [
          bearer(await token({ sub: 'ada' })),
          bearer(await token({ sub: 'bob' })),
        ];
        const secret = uniqueRoom();
        const made = await app.inject({
          method: 'PUT',
          url: `/api/rooms/${secret}`,
          headers: ada,
          payload: { visibility: 'private' },
        });
        assert.equal(made.statusCode, 201, made.body);
        const post = async (room: string, content: string) => {
          const response = await app.inject({
            method: 'POST',
            url: '/api/messages',
            headers: ada,
            payload: { room, content },
          });
          assert.equal(response.statusCode, 201, response.body);
          return response.json() as Message;
        };
        const open = await post('general', 'launch plans');
        const hidden = await post(secret, 'launch codes');
        const search = async (headers: Record<string, string>, query: string) => {
          const response = await app.inject({ url: `/api/messages?${query}`, headers });
          return response;
        };
        assert.deepEqual(ids((await search(ada, 'q=launch')).json()), [open.id, hidden.id]);
        assert.deepEqual(ids((await search(bob, 'q=launch')).json()), [open.id]);
        assert.deepEqual(ids((await search(bob, 'q=codes')).json()), []);
        assertProblem(await search(bob, `q=launch&room=${secret}`), 403);
        // A q it cannot take comes first.
        const bad = await search(bob, `q=ab&room=${secret}&q=cd`);
        assertProblem(bad, 400);
        assert.deepEqual(ids((await search(ada, `q=la&room=${secret}`)).json()), [hidden.id]);
      },
      AUTH,
    );
  });
});
