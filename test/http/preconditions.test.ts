/**
 * If-Match and If-None-Match on every resource with an ETag, as RFC 9110
 * section 13.2.2 orders them: on a GET a failed If-Match is a 412 before
 * If-None-Match can give a 304; on a write a failed If-Match, or an
 * If-None-Match that matches, is a 412 and nothing changes. An entity-tag may
 * hold a comma inside its quotes. A fixed field that differs is a 400 before
 * any 412 (the precedence list).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertProblem, eachEngine, uniqueRoom } from './http-contract.ts';

eachEngine('preconditions', (_engine, shared) => {
  async function editedTwice() {
    const app = shared();
    const message = await app.create({ room: uniqueRoom(), content: 'one' });
    const url = `/api/messages/${message.id}`;
    const edited = await app.inject({ method: 'PUT', url, payload: { content: 'two' } });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal(edited.headers.etag, '"2"');
    return { app, url };
  }

  it('GET a message: a failed If-Match is a 412, before If-None-Match is looked at', async () => {
    const { app, url } = await editedTwice();
    const get = (headers: Record<string, string>) => app.inject({ method: 'GET', url, headers });
    assertProblem(await get({ 'if-match': '"1"' }), 412, 'precondition-failed');
    assertProblem(
      await get({ 'if-match': '"1"', 'if-none-match': '"2"' }),
      412,
      'precondition-failed',
    );
    assert.equal((await get({ 'if-match': '"2"' })).statusCode, 200);
    assert.equal((await get({ 'if-match': '*' })).statusCode, 200);
    assert.equal((await get({ 'if-match': '"1", "2"' })).statusCode, 200);
    // A weak tag never matches If-Match (strong comparison).
    assertProblem(await get({ 'if-match': 'W/"2"' }), 412, 'precondition-failed');
    assert.equal((await get({ 'if-match': '"2"', 'if-none-match': '"2"' })).statusCode, 304);
    // What is not stored is a 404 first; a malformed header a 400 before that.
    const missing = '/api/messages/00000000-0000-7000-8000-000000000000';
    assertProblem(
      await app.inject({ method: 'GET', url: missing, headers: { 'if-match': '"1"' } }),
      404,
      'not-found',
    );
    assertProblem(
      await app.inject({ method: 'GET', url: missing, headers: { 'if-match': '"1" "2"' } }),
      400,
      'validation',
    );
  });

  it('PUT and DELETE of a message: an If-None-Match that matches is a 412 and changes nothing', async () => {
    const { app, url } = await editedTwice();
    for (const value of ['*', '"2"', 'W/"2"', '"9", "2"']) {
      const put = await app.inject({
        method: 'PUT',
        url,
        headers: { 'if-none-match': value },
        payload: { content: 'three' },
      });
      assertProblem(put, 412, 'precondition-failed');
      const del = await app.inject({ method: 'DELETE', url, headers: { 'if-none-match': value } });
      assertProblem(del, 412, 'precondition-failed');
    }
    const unchanged = await app.inject({ method: 'GET', url });
    assert.equal(unchanged.statusCode, 200);
    assert.equal((unchanged.json() as { content: string }).content, 'two');
    // One that does not match lets the write go on; with If-Match, both must hold.
    const put = await app.inject({
      method: 'PUT',
      url,
      headers: { 'if-none-match': '"1"', 'if-match': '"2"' },
      payload: { content: 'three' },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.headers.etag, '"3"');
    const del = await app.inject({ method: 'DELETE', url, headers: { 'if-none-match': '"2"' } });
    assert.equal(del.statusCode, 200, del.body);
  });

  it('an entity-tag may hold a comma inside its quotes', async () => {
    const { app, url } = await editedTwice();
    const notModified = await app.inject({
      method: 'GET',
      url,
      headers: { 'if-none-match': '"a,b", "2"' },
    });
    assert.equal(notModified.statusCode, 304, notModified.body);
    const put = await app.inject({
      method: 'PUT',
      url,
      headers: { 'if-match': '"a,b" , "2"' },
      payload: { content: 'three' },
    });
    assert.equal(put.statusCode, 200, put.body);
    // Empty list elements are allowed; two tags with no comma between them are not.
    const empty = await app.inject({ method: 'GET', url, headers: { 'if-none-match': ', ,"3",' } });
    assert.equal(empty.statusCode, 304, empty.body);
    for (const bad of ['"3" "4"', '"3",x', '"3"x', '"a"b"']) {
      const problem = assertProblem(
        await app.inject({ method: 'GET', url, headers: { 'if-none-match': bad } }),
        400,
        'validation',
      );
      assert.equal(problem.errors?.[0]?.header, 'if-none-match', bad);
    }
  });

  it('a room: If-Match on GET, any If-None-Match on PUT, and the 400 of a fixed field before a 412', async () => {
    const app = shared();
    const name = uniqueRoom();
    const url = `/api/rooms/${name}`;
    // Creation: a name in the body that differs is the 400, even with an If-Match that fails.
    assertProblem(
      await app.inject({
        method: 'PUT',
        url,
        headers: { 'if-match': '"1"' },
        payload: { name: 'another-name' },
      }),
      400,
      'fixed-field',
    );
    assertProblem(
      await app.inject({ method: 'PUT', url, headers: { 'if-match': '"1"' }, payload: {} }),
      412,
      'precondition-failed',
    );
    // A list on a room about to be made holds: it is created.
    const created = await app.inject({
      method: 'PUT',
      url,
      headers: { 'if-none-match': '"1"' },
      payload: { topic: 'a' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const updated = await app.inject({ method: 'PUT', url, payload: { topic: 'b' } });
    assert.equal(updated.headers.etag, '"2"');
    const put = (value: string, topic: string) =>
      app.inject({ method: 'PUT', url, headers: { 'if-none-match': value }, payload: { topic } });
    assert.equal((await put('"1"', 'c')).statusCode, 200);
    for (const value of ['"3"', '*', 'W/"3"']) {
      assertProblem(await put(value, 'd'), 412, 'precondition-failed');
    }
    const room = await app.inject({ method: 'GET', url });
    assert.equal((room.json() as { topic: string }).topic, 'c');
    const get = (headers: Record<string, string>) => app.inject({ method: 'GET', url, headers });
    assertProblem(await get({ 'if-match': '"2"' }), 412, 'precondition-failed');
    assertProblem(
      await get({ 'if-match': '"2"', 'if-none-match': '"3"' }),
      412,
      'precondition-failed',
    );
    assert.equal((await get({ 'if-match': '"3"', 'if-none-match': '"3"' })).statusCode, 304);
    assert.equal((await get({ 'if-match': '"3"' })).statusCode, 200);
  });

  it('a read marker: a failed If-Match on GET is a 412', async () => {
    const app = shared();
    const room = uniqueRoom();
    const message = await app.create({ room });
    const url = `/api/rooms/${room}/read-markers/reader-1`;
    const set = await app.inject({ method: 'PUT', url, payload: { lastRead: message.id } });
    assert.equal(set.statusCode, 200, set.body);
    const version = set.headers.etag as string;
    assertProblem(
      await app.inject({ method: 'GET', url, headers: { 'if-match': '"99"' } }),
      412,
      'precondition-failed',
    );
    const read = await app.inject({ method: 'GET', url, headers: { 'if-match': version } });
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.headers.etag, version);
  });
});
