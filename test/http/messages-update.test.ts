/** PUT /api/messages/{id}: the echo, idempotent re-PUT, fixed fields, 409, If-Match and 412. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import { UTC_MS, assertProblem, eachEngine, onlyError } from './http-contract.ts';

eachEngine('PUT /api/messages/{id}', (_engine, shared) => {
  const put = (id: string, payload: object, headers: Record<string, string> = {}) =>
    shared().inject({ method: 'PUT', url: `/api/messages/${id}`, payload, headers });
  const seq = async () =>
    Number((await shared().inject({ url: '/api/messages?limit=1' })).headers['event-seq']);

  it('200 with the updated message: version + 1, new updatedAt, ETag', async () => {
    const message = await shared().create();
    const response = await put(message.id, { content: 'edited' });
    assert.equal(response.statusCode, 200);
    const updated = response.json() as Message;
    assert.equal(updated.content, 'edited');
    assert.equal(updated.version, 2);
    assert.equal(response.headers.etag, '"2"');
    assert.match(updated.updatedAt, UTC_MS);
    assert.ok(updated.updatedAt >= message.createdAt);
    assert.deepEqual(
      { ...updated, content: message.content, version: 1, updatedAt: message.updatedAt },
      message,
      'only content, version and updatedAt change',
    );
    assert.deepEqual(
      (await shared().inject({ url: `/api/messages/${message.id}` })).json(),
      updated,
    );
  });

  it('GET, change content, PUT the whole message back works', async () => {
    const { inject, create } = shared();
    const message = await create({ room: 'echo' });
    const read = (await inject({ url: `/api/messages/${message.id}` })).json();
    const response = await put(message.id.toUpperCase(), { ...read, content: 'edited' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().version, 2);
    // And again, from what the PUT answered.
    const again = await put(message.id, { ...response.json(), content: 'edited twice' });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().version, 3);
  });

  it('re-sending the same content changes nothing: same version, updatedAt, no change', async () => {
    const message = await shared().create();
    const edited = (await put(message.id, { content: 'edited' })).json() as Message;
    const before = await seq();
    for (const body of [{ content: 'edited' }, { ...edited }]) {
      const response = await put(message.id, body);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), edited);
      assert.equal(response.headers.etag, '"2"');
    }
    assert.equal(await seq(), before, 'no change was logged');
  });

  it('content that differs only in Unicode normalization is a change', async () => {
    const message = await shared().create({ content: 'caf\u00e9' });
    const response = await put(message.id, { content: 'cafe\u0301' });
    assert.equal(response.json().version, 2);
    assert.equal(response.json().content, 'cafe\u0301');
  });

  it('id, room, author or createdAt that differ are a 400 naming each', async () => {
    const message = await shared().create({ room: 'fixed' });
    const other = '00000000-0000-7000-8000-000000000000';
    const cases: [string, unknown][] = [
      ['id', other],
      ['room', 'elsewhere'],
      ['author', 'eve'],
      ['createdAt', '2000-01-01T00:00:00.000Z'],
    ];
    for (const [field, value] of cases) {
      const response = await put(message.id, { ...message, content: 'x', [field]: value });
      const problem = assertProblem(response, 400, 'fixed-field');
      assert.equal(onlyError(problem).pointer, `#/${field}`);
      assert.ok(problem.detail.includes(field), problem.detail);
    }
    const all = await put(message.id, {
      content: 'x',
      id: other,
      room: 'elsewhere',
      author: 'eve',
      createdAt: '2000-01-01T00:00:00.000Z',
    });
    const problem = assertProblem(all, 400, 'fixed-field');
    assert.deepEqual(problem.errors?.map((e) => e.pointer).sort(), [
      '#/author',
      '#/createdAt',
      '#/id',
      '#/room',
    ]);
    const unchanged = await shared().inject({ url: `/api/messages/${message.id}` });
    assert.deepEqual(unchanged.json(), message, 'nothing was stored');
  });

  it('fixed fields equal to the stored ones pass (id in any case)', async () => {
    const message = await shared().create();
    const response = await put(message.id, {
      content: 'edited',
      id: message.id.toUpperCase(),
      room: message.room,
      author: message.author,
      createdAt: message.createdAt,
    });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('a version that is not the current one is a 409', async () => {
    const message = await shared().create();
    await put(message.id, { content: 'v2' });
    for (const version of [1, 3]) {
      const response = await put(message.id, { content: 'v3', version });
      assertProblem(response, 409, 'version-conflict');
    }
    const current = await put(message.id, { content: 'v3', version: 2 });
    assert.equal(current.statusCode, 200);
    assert.equal(current.json().version, 3);
  });

  it('an updatedAt that is not the current one is a 409', async () => {
    const message = await shared().create();
    const v2 = (await put(message.id, { content: 'v2' })).json() as Message;
    const stale = await put(message.id, { ...message, content: 'lost update' });
    assertProblem(stale, 409, 'version-conflict');
    const staleTime = await put(message.id, { content: 'x', updatedAt: message.updatedAt });
    assertProblem(staleTime, 409, 'version-conflict');
    const current = await put(message.id, { content: 'v3', updatedAt: v2.updatedAt });
    assert.equal(current.statusCode, 200);
  });

  it('a stale read PUT back with the same content is still a 409', async () => {
    const message = await shared().create({ content: 'a' });
    await put(message.id, { content: 'b' });
    assertProblem(await put(message.id, { ...message }), 409, 'version-conflict');
  });

  it('If-Match with the current ETag (strong, list or *) lets the edit through', async () => {
    const message = await shared().create();
    let version = 1;
    for (const value of [`"${version}"`, '"9", "2"', '*', '"9","4"']) {
      const response = await put(message.id, { content: `c${version}` }, { 'if-match': value });
      assert.equal(response.statusCode, 200, `${value}: ${response.body}`);
      version += 1;
      assert.equal(response.json().version, version);
    }
  });

  it('If-Match with a stale ETag is a 412; a weak tag never matches', async () => {
    const message = await shared().create();
    await put(message.id, { content: 'v2' });
    for (const value of ['"1"', 'W/"2"', '"1", W/"2"', '"02"']) {
      const response = await put(message.id, { content: 'v3' }, { 'if-match': value });
      assertProblem(response, 412, 'precondition-failed');
    }
    const current = await shared().inject({ url: `/api/messages/${message.id}` });
    assert.equal(current.json().version, 2, 'nothing was stored');
  });

  it('If-Match applies to a PUT that would change nothing', async () => {
    const message = await shared().create({ content: 'same' });
    await put(message.id, { content: 'other' });
    await put(message.id, { content: 'same' });
    assertProblem(
      await put(message.id, { content: 'same' }, { 'if-match': '"1"' }),
      412,
      'precondition-failed',
    );
  });

  it('a malformed If-Match is a 400 naming the header', async () => {
    const message = await shared().create();
    const response = await put(message.id, { content: 'x' }, { 'if-match': 'not-a-tag' });
    assert.equal(onlyError(assertProblem(response, 400, 'validation')).header, 'if-match');
  });

  it('404 for an id that is not stored, or of any other shape', async () => {
    assertProblem(
      await put('00000000-0000-7000-8000-000000000000', { content: 'x' }),
      404,
      'not-found',
    );
    assertProblem(await put('nope', { content: 'x' }), 404, 'not-found');
  });

  it('content is required and follows its rules; unknown fields are refused', async () => {
    const message = await shared().create();
    assert.equal(
      onlyError(assertProblem(await put(message.id, {}), 400, 'validation')).pointer,
      '#/content',
    );
    assert.equal(
      onlyError(assertProblem(await put(message.id, { content: ' ' }), 400, 'validation')).pointer,
      '#/content',
    );
    const extra = assertProblem(await put(message.id, { content: 'x', pinned: true }), 400);
    assert.equal(onlyError(extra).pointer, '#/pinned');
  });
});
