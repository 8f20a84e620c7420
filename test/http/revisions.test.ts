/**
 * GET /api/messages/{id}/revisions: version 1 as created, one version per
 * edit that changed the content (in the edit's own transaction), who made
 * each, paging with its Link, and 404s (unknown, malformed, deleted). On
 * every engine, with auth off and on.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import type { Revision } from '../../src/domain/revision.ts';
import { AUTH } from '../auth/tokens.ts';
import { callerFor } from '../rooms/rooms-support.ts';
import {
  assertProblem,
  eachEngine,
  onlyError,
  uniqueRoom,
  type ContractApp,
} from './http-contract.ts';

const revisionsPath = (id: string, query = '') =>
  `/api/messages/${id}/revisions${query === '' ? '' : `?${query}`}`;

async function revisions(app: ContractApp, id: string, query = '') {
  const response = await app.inject({ url: revisionsPath(id, query) });
  assert.equal(response.statusCode, 200, response.body);
  return { list: response.json<Revision[]>(), link: response.headers.link as string | undefined };
}

async function edit(app: ContractApp, id: string, content: string): Promise<Message> {
  const response = await app.inject({
    method: 'PUT',
    url: `/api/messages/${id}`,
    payload: { content },
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<Message>();
}

eachEngine('GET /api/messages/{id}/revisions', (_engine, shared) => {
  it('a new message has one version: its content as created, by its author', async () => {
    const app = shared();
    const m = await app.create({ author: 'ada', content: 'first words', room: uniqueRoom() });
    const { list, link } = await revisions(app, m.id);
    assert.deepEqual(list, [
      { version: 1, content: 'first words', updatedAt: m.createdAt, editedBy: 'ada' },
    ]);
    assert.equal(link, undefined);
    // Any case of the id.
    assert.deepEqual((await revisions(app, m.id.toUpperCase())).list, list);
  });

  it('each edit that changes the content adds a version; the same content adds none; editedBy is null with auth off', async () => {
    const app = shared();
    const m = await app.create({ author: 'ada', content: 'v1' });
    const v2 = await edit(app, m.id, 'v2');
    await edit(app, m.id, 'v2'); // the same content: nothing
    const v3 = await edit(app, m.id, 'v3 "quoted" é 👩‍👩‍👧\n');
    const { list } = await revisions(app, m.id);
    assert.deepEqual(list, [
      { version: 1, content: 'v1', updatedAt: m.createdAt, editedBy: 'ada' },
      { version: 2, content: 'v2', updatedAt: v2.updatedAt, editedBy: null },
      { version: 3, content: 'v3 "quoted" é 👩‍👩‍👧\n', updatedAt: v3.updatedAt, editedBy: null },
    ]);
    // The newest version is the message as it is now.
    const now = (await app.inject({ url: `/api/messages/${m.id}` })).json<Message>();
    assert.equal(now.version, list.at(-1)!.version);
    assert.equal(now.content, list.at(-1)!.content);
    // A refused edit keeps no version.
    const stale = await app.inject({
      method: 'PUT',
      url: `/api/messages/${m.id}`,
      headers: { 'if-match': '"1"' },
      payload: { content: 'late' },
    });
    assertProblem(stale, 412);
    assert.equal((await revisions(app, m.id)).list.length, 3);
  });

  it('pages by limit and after=<version>, with a Link to the next page', async () => {
    const app = shared();
    const m = await app.create({ content: 'c1' });
    for (let v = 2; v <= 7; v += 1) await edit(app, m.id, `c${v}`);
    const seen: number[] = [];
    let url: string | undefined = revisionsPath(m.id, 'limit=3');
    let pages = 0;
    while (url !== undefined) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 200, response.body);
      seen.push(...response.json<Revision[]>().map((r) => r.version));
      const link = response.headers.link as string | undefined;
      url = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1];
      pages += 1;
    }
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(pages, 3);
    assert.deepEqual(
      (await revisions(app, m.id, 'after=5')).list.map((r) => r.content),
      ['c6', 'c7'],
    );
    const exact = await revisions(app, m.id, 'after=4&limit=3');
    assert.deepEqual(
      exact.list.map((r) => r.version),
      [5, 6, 7],
    );
    assert.equal(exact.link, undefined, 'no next page when nothing lies beyond');
    assert.deepEqual((await revisions(app, m.id, 'after=7')).list, []);
    assert.deepEqual((await revisions(app, m.id, 'after=1000')).list, []);
    // Any version the parameter allows is a bound, also beyond a 32-bit integer.
    for (const after of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
      assert.deepEqual((await revisions(app, m.id, `after=${after}`)).list, [], String(after));
    }
    // The default page holds them all.
    assert.equal((await revisions(app, m.id)).list.length, 7);
  });

  it('a malformed limit or after is a 400 naming it', async () => {
    const app = shared();
    const m = await app.create();
    for (const [query, name] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=x', 'limit'],
      ['after=-1', 'after'],
      ['after=1.5', 'after'],
      ['after=v2', 'after'],
    ] as const) {
      const response = await app.inject({ url: revisionsPath(m.id, query) });
      assert.equal(onlyError(assertProblem(response, 400, 'validation')).parameter, name, query);
    }
  });

  it('404 for an id that is not stored, of any shape, and after the message is deleted', async () => {
    const app = shared();
    const m = await app.create();
    await edit(app, m.id, 'edited');
    for (const id of ['01890000-0000-7000-8000-000000000000', 'nope', '42']) {
      assertProblem(await app.inject({ url: revisionsPath(id) }), 404, 'not-found');
    }
    assert.equal(
      (await app.inject({ method: 'DELETE', url: `/api/messages/${m.id}` })).statusCode,
      200,
    );
    assertProblem(await app.inject({ url: revisionsPath(m.id) }), 404, 'not-found');
    assertProblem(await app.inject({ url: revisionsPath(m.id, 'after=1') }), 404, 'not-found');
  });
});

eachEngine(
  'revisions with auth on',
  (_engine, shared) => {
    it("editedBy is the token's subject that made the edit, an admin's too", async () => {
      const app = shared();
      const ada = await callerFor(app, true, 'ada');
      const root = await callerFor(app, true, 'root', true);
      const m = await ada.post(uniqueRoom(), 'mine');
      assert.equal(
        (await ada.put(`/api/messages/${m.id}`, { content: 'mine, edited' })).statusCode,
        200,
      );
      assert.equal(
        (await root.put(`/api/messages/${m.id}`, { content: 'moderated' })).statusCode,
        200,
      );
      const list = await ada.read<Revision[]>(revisionsPath(m.id));
      assert.deepEqual(
        list.map((r) => [r.version, r.content, r.editedBy]),
        [
          [1, 'mine', 'ada'],
          [2, 'mine, edited', 'ada'],
          [3, 'moderated', 'root'],
        ],
      );
    });

    it("another user's refused edit keeps no version; a private room's revisions are a 404 for a non-member", async () => {
      const app = shared();
      const ada = await callerFor(app, true, 'ada');
      const bob = await callerFor(app, true, 'bob');
      const eve = await callerFor(app, true, 'eve');
      const closed = uniqueRoom();
      await ada.putRoom(closed, { visibility: 'private' });
      await ada.putMember(closed, 'bob');
      const m = await ada.post(closed, 'secret');
      assertProblem(await bob.put(`/api/messages/${m.id}`, { content: 'not yours' }), 403);
      assert.equal((await bob.read<Revision[]>(revisionsPath(m.id))).length, 1);
      assertProblem(await eve.get(revisionsPath(m.id)), 404, 'not-found');
    });
  },
  AUTH,
);
