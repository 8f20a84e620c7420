/** POST /api/messages and the message's fields (docs/concepts.md "Messages", docs/api.md). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  UTC_MS,
  UUID_V7,
  assertProblem,
  eachEngine,
  onlyError,
  uniqueRoom,
  withApp,
} from './http-contract.ts';

eachEngine('POST /api/messages', (engine, shared) => {
  it('201 with the message, Location and a strong ETag', async () => {
    const { inject } = shared();
    const before = Date.now();
    const response = await inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author: 'ada', content: 'hello', room: 'lobby' },
    });
    const after = Date.now();
    assert.equal(response.statusCode, 201);
    assert.match(String(response.headers['content-type']), /^application\/json; charset=utf-8$/);
    const message = response.json();
    assert.deepEqual(Object.keys(message).sort(), [
      'author',
      'content',
      'createdAt',
      'id',
      'replyTo',
      'room',
      'updatedAt',
      'version',
    ]);
    assert.equal(message.author, 'ada');
    assert.equal(message.content, 'hello');
    assert.equal(message.room, 'lobby');
    assert.equal(message.version, 1);
    assert.equal(message.replyTo, null);
    assert.equal(response.headers.location, `/api/messages/${message.id}`);
    assert.equal(response.headers.etag, '"1"');
    assert.match(message.createdAt, UTC_MS);
    assert.equal(message.updatedAt, message.createdAt);
    const at = Date.parse(message.createdAt);
    assert.ok(at >= before - 1 && at <= after + 1, 'createdAt is the time of the create');
    const got = await inject({ url: response.headers.location as string });
    assert.deepEqual(got.json(), message);
  });

  it('room is optional and defaults to "general"', async () => {
    const { create } = shared();
    assert.equal((await create({ room: undefined })).room, 'general');
  });

  it('the id is a lowercase UUIDv7 (RFC 9562)', async () => {
    const { create } = shared();
    const message = await create();
    assert.match(message.id, UUID_V7);
    // The first 48 bits are the Unix time in milliseconds.
    const ms = parseInt(message.id.replace(/-/g, '').slice(0, 12), 16);
    assert.ok(Math.abs(ms - Date.parse(message.createdAt)) < 5_000, 'id time is creation time');
  });

  it('ids grow: a message created after another one was answered has a larger id', async () => {
    const { create } = shared();
    let previous = '';
    for (let i = 0; i < 50; i += 1) {
      const { id } = await create({ room: uniqueRoom() });
      assert.ok(id > previous, `${id} > ${previous}`);
      previous = id;
    }
  });

  it('parallel creates get distinct ids and each is stored', async () => {
    const { inject } = shared();
    const room = uniqueRoom();
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'ada', content: `n${i}`, room },
        }),
      ),
    );
    const ids = responses.map((r) => r.json().id as string);
    assert.equal(new Set(ids).size, 30);
    const list = await inject({ url: `/api/messages?room=${room}` });
    assert.deepEqual(
      list.json().map((m: { id: string }) => m.id),
      [...ids].sort(),
    );
  });

  it('any other body field is a 400 naming it', async () => {
    const { inject } = shared();
    for (const field of ['id', 'version', 'createdAt', 'updatedAt', 'extra', '__proto__x']) {
      const response = await inject({
        method: 'POST',
        url: '/api/messages',
        payload: { author: 'ada', content: 'x', [field]: field === 'version' ? 1 : 'x' },
      });
      const problem = assertProblem(response, 400, 'validation');
      const error = onlyError(problem);
      assert.equal(error.pointer, `#/${field}`);
      assert.ok(error.detail.includes(field), error.detail);
      assert.ok(problem.detail.includes(field), problem.detail);
    }
  });

  it('author is required (auth is off)', async () => {
    const { inject } = shared();
    const response = await inject({
      method: 'POST',
      url: '/api/messages',
      payload: { content: 'x' },
    });
    assert.equal(onlyError(assertProblem(response, 400, 'validation')).pointer, '#/author');
  });

  it('content is required', async () => {
    const { inject } = shared();
    const response = await inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author: 'ada' },
    });
    assert.equal(onlyError(assertProblem(response, 400, 'validation')).pointer, '#/content');
  });

  it('several failures are listed one entry each', async () => {
    const { inject } = shared();
    const response = await inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author: '', content: ' ', room: 'no spaces', extra: 1 },
    });
    const problem = assertProblem(response, 400, 'validation');
    assert.deepEqual(problem.errors?.map((e) => e.pointer).sort(), [
      '#/author',
      '#/content',
      '#/extra',
      '#/room',
    ]);
  });

  it('nothing is stored by a refused create', async () => {
    await withApp(engine, async ({ inject }) => {
      await inject({
        method: 'POST',
        url: '/api/messages',
        payload: { author: 'ada', content: 'x', extra: true },
      });
      const list = await inject({ url: '/api/messages' });
      assert.deepEqual(list.json(), []);
      assert.equal(list.headers['event-seq'], '0');
    });
  });
});
