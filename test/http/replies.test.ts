/**
 * `replyTo`: set on create (a stored message of the same room, judged after
 * the room's access rule), echoed as null when absent, fixed on PUT, and the
 * thread filter `GET /api/messages?replyTo=`, which outlives the message it
 * names. On every engine, through the HTTP API.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import { AUTH } from '../auth/tokens.ts';
import { callerFor, roomPath } from '../rooms/rooms-support.ts';
import { assertProblem, eachEngine, onlyError, uniqueRoom, withApp } from './http-contract.ts';

const ids = (messages: readonly Message[]) => messages.map((m) => m.id);

eachEngine('replyTo', (_engine, shared) => {
  it('a reply names a message of its room; the field is null when absent and echoed everywhere', async () => {
    const app = shared();
    const room = uniqueRoom();
    const parent = await app.create({ room, content: 'question' });
    assert.equal(parent.replyTo, null);
    // Any case in, lowercase out.
    const reply = await app.create({ room, content: 'answer', replyTo: parent.id.toUpperCase() });
    assert.equal(reply.replyTo, parent.id);
    const explicitNull = await app.create({ room, content: 'no answer', replyTo: null });
    assert.equal(explicitNull.replyTo, null);

    const byId = await app.inject({ url: `/api/messages/${reply.id}` });
    assert.equal(byId.json<Message>().replyTo, parent.id);
    const listed = (await app.inject({ url: `/api/messages?room=${room}` })).json<Message[]>();
    assert.deepEqual(
      listed.map((m) => m.replyTo),
      [null, parent.id, null],
    );
  });

  it('a replyTo that is not a stored message of the same room is a 400 naming it, and nothing is stored', async () => {
    const app = shared();
    const room = uniqueRoom();
    const other = await app.create({ room: uniqueRoom(), content: 'elsewhere' });
    const gone = await app.create({ room, content: 'soon gone' });
    assert.equal(
      (await app.inject({ method: 'DELETE', url: `/api/messages/${gone.id}` })).statusCode,
      200,
    );
    const never = '01890000-0000-7000-8000-000000000000';
    for (const replyTo of [other.id, gone.id, never]) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/messages',
        payload: { author: 'ada', content: 'orphan', room, replyTo },
      });
      const problem = assertProblem(response, 400, 'validation');
      assert.deepEqual(onlyError(problem).pointer, '#/replyTo');
    }
    // A message to a room that does not exist yet answers nothing there: 400, and no room made.
    const fresh = uniqueRoom();
    const response = await app.inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author: 'ada', content: 'first', room: fresh, replyTo: other.id },
    });
    assertProblem(response, 400, 'validation');
    assert.equal((await app.inject({ url: roomPath(fresh) })).statusCode, 404);
    assert.deepEqual(
      ids((await app.inject({ url: `/api/messages?room=${room}` })).json<Message[]>()),
      [],
    );
  });

  it('a malformed replyTo is a 400 of the body rule, before any store rule', async () => {
    const app = shared();
    for (const replyTo of ['nope', 42, '', '01890000-0000-7000-8000-00000000000g']) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/messages',
        payload: { author: 'ada', content: 'x', replyTo },
      });
      const problem = assertProblem(response, 400, 'validation');
      assert.equal(onlyError(problem).pointer, '#/replyTo');
    }
    // Several failures together: the body's own rules, each named.
    const response = await app.inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author: 'ada', content: ' ', replyTo: 'nope' },
    });
    const problem = assertProblem(response, 400, 'validation');
    assert.deepEqual(problem.errors!.map((e) => ('pointer' in e ? e.pointer : '')).sort(), [
      '#/content',
      '#/replyTo',
    ]);
  });

  it('replyTo is fixed: the same value (any case) may be sent back, another is a 400 naming it', async () => {
    const app = shared();
    const room = uniqueRoom();
    const parent = await app.create({ room });
    const other = await app.create({ room });
    const reply = await app.create({ room, replyTo: parent.id });
    const put = (id: string, body: Record<string, unknown>) =>
      app.inject({ method: 'PUT', url: `/api/messages/${id}`, payload: body });

    const same = await put(reply.id, {
      ...reply,
      content: 'edited',
      replyTo: parent.id.toUpperCase(),
    });
    assert.equal(same.statusCode, 200, same.body);
    assert.equal(same.json<Message>().replyTo, parent.id);
    assert.equal(same.json<Message>().version, 2);
    for (const replyTo of [other.id, null]) {
      const response = await put(reply.id, { content: 'again', replyTo });
      const problem = assertProblem(response, 400, 'fixed-field');
      assert.equal(onlyError(problem).pointer, '#/replyTo');
    }
    const unanswered = await put(parent.id, { content: 'q2', replyTo: other.id });
    assert.equal(onlyError(assertProblem(unanswered, 400, 'fixed-field')).pointer, '#/replyTo');
    const kept = await put(parent.id, { ...parent, content: 'q3' });
    assert.equal(kept.statusCode, 200, kept.body);
    // Nothing changed by the refused ones.
    const now = (await app.inject({ url: `/api/messages/${reply.id}` })).json<Message>();
    assert.equal(now.version, 2);
    assert.equal(now.content, 'edited');
  });

  it('?replyTo= lists the direct replies in id order, pages with its Link, and outlives the parent', async () => {
    const app = shared();
    const room = uniqueRoom();
    const parent = await app.create({ room, content: 'root' });
    const replies: Message[] = [];
    for (let i = 0; i < 5; i += 1) {
      replies.push(await app.create({ room, content: `reply ${i}`, replyTo: parent.id }));
      await app.create({ room, content: `chatter ${i}` });
    }
    // A reply to a reply is not a direct reply of the root.
    const nested = await app.create({ room, content: 'nested', replyTo: replies[0]!.id });
    const list = async (query: string) => {
      const response = await app.inject({ url: `/api/messages?${query}` });
      assert.equal(response.statusCode, 200, response.body);
      return response;
    };
    assert.deepEqual(ids((await list(`replyTo=${parent.id}`)).json()), ids(replies));
    assert.deepEqual(
      ids((await list(`replyTo=${parent.id.toUpperCase()}&order=desc`)).json()),
      ids(replies).reverse(),
    );
    assert.deepEqual(ids((await list(`replyTo=${replies[0]!.id}`)).json()), [nested.id]);
    assert.deepEqual(ids((await list(`replyTo=${nested.id}`)).json()), []);
    assert.deepEqual(
      ids(
        (
          await list(`replyTo=${parent.id}&after=${replies[1]!.id}&before=${replies[4]!.id}`)
        ).json(),
      ),
      ids(replies.slice(2, 4)),
    );
    assert.deepEqual(ids((await list(`replyTo=${parent.id}&room=${room}`)).json()), ids(replies));
    assert.deepEqual(ids((await list(`replyTo=${parent.id}&room=${uniqueRoom()}`)).json()), []);
    assert.deepEqual(
      ids(
        (
          await list(`replyTo=${parent.id}&id=${replies[3]!.id}&id=${nested.id}&id=${parent.id}`)
        ).json(),
      ),
      [replies[3]!.id],
    );
    assert.deepEqual(ids((await list(`replyTo=${parent.id}&q=reply+3`)).json()), [replies[3]!.id]);
    assert.deepEqual(
      ids((await list(`replyTo=${parent.id}&around=${replies[2]!.id}&limit=2`)).json()),
      ids(replies.slice(2, 4)),
    );

    // Paging: the Link keeps the thread.
    const seen: string[] = [];
    let url: string | undefined = `/api/messages?replyTo=${parent.id}&limit=2&order=desc`;
    while (url !== undefined) {
      const response = await list(url.slice('/api/messages?'.length));
      seen.push(...ids(response.json()));
      const link = response.headers.link as string | undefined;
      url = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1];
      if (url !== undefined) assert.ok(url.includes(`replyTo=${parent.id}`), url);
    }
    assert.deepEqual(seen, ids(replies).reverse());

    // The parent goes; its thread and each reply's replyTo stay.
    assert.equal(
      (await app.inject({ method: 'DELETE', url: `/api/messages/${parent.id}` })).statusCode,
      200,
    );
    assert.deepEqual(ids((await list(`replyTo=${parent.id}`)).json()), ids(replies));
    const kept = (await app.inject({ url: `/api/messages/${replies[0]!.id}` })).json<Message>();
    assert.equal(kept.replyTo, parent.id);
  });

  it('a malformed or repeated replyTo parameter is a 400 naming it', async () => {
    const app = shared();
    for (const query of ['replyTo=nope', 'replyTo=', `replyTo=${'0'.repeat(36)}`]) {
      const response = await app.inject({ url: `/api/messages?${query}` });
      const problem = assertProblem(response, 400, 'validation');
      assert.equal(onlyError(problem).parameter, 'replyTo', query);
    }
    const a = await app.create();
    const repeated = await app.inject({ url: `/api/messages?replyTo=${a.id}&replyTo=${a.id}` });
    assert.equal(onlyError(assertProblem(repeated, 400, 'validation')).parameter, 'replyTo');
  });
});

eachEngine(
  'replyTo with auth on',
  (_engine, shared) => {
    it('access first: a private room is a 403 before its replyTo is judged; a thread leaves out what the caller may not read', async () => {
      const app = shared();
      const ada = await callerFor(app, true, 'ada');
      const eve = await callerFor(app, true, 'eve');
      const closed = uniqueRoom();
      await ada.putRoom(closed, { visibility: 'private' });
      const secret = await ada.post(closed, 'secret');
      const answer = await ada.post(closed, 'answer', { replyTo: secret.id });
      assert.equal(answer.replyTo, secret.id);
      // eve may not read the room: 403, whatever the replyTo.
      for (const replyTo of [secret.id, '01890000-0000-7000-8000-000000000000']) {
        const response = await eve.request('POST', '/api/messages', {
          content: 'in?',
          room: closed,
          replyTo,
        });
        assertProblem(response, 403);
      }
      // From a room she may read, a private message is not a message of that room.
      const open = uniqueRoom();
      await eve.post(open, 'hi');
      const response = await eve.request('POST', '/api/messages', {
        content: 're',
        room: open,
        replyTo: secret.id,
      });
      assert.equal(onlyError(assertProblem(response, 400, 'validation')).pointer, '#/replyTo');
      assert.deepEqual(await eve.read<Message[]>(`/api/messages?replyTo=${secret.id}`), []);
      assert.deepEqual(ids(await ada.read<Message[]>(`/api/messages?replyTo=${secret.id}`)), [
        answer.id,
      ]);
    });
  },
  AUTH,
);

// One engine-independent case needs an empty database: every message of a fresh store is unanswered.
eachEngine('replyTo on a fresh store', (engine) => {
  it('every message listed carries replyTo, null unless set', async () => {
    await withApp(engine, async (app) => {
      const a = await app.create({ content: 'a' });
      await app.create({ content: 'b', replyTo: a.id });
      const all = (await app.inject({ url: '/api/messages' })).json<Message[]>();
      assert.deepEqual(
        all.map((m) => Object.keys(m)),
        [
          ['id', 'room', 'author', 'content', 'createdAt', 'updatedAt', 'version', 'replyTo'],
          ['id', 'room', 'author', 'content', 'createdAt', 'updatedAt', 'version', 'replyTo'],
        ],
      );
      assert.deepEqual(
        all.map((m) => m.replyTo),
        [null, a.id],
      );
    });
  });
});
