/** GET /api/messages/{id}: ETag, If-None-Match (weak comparison, lists, *), 404 for any shape of id. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertProblem, eachEngine, onlyError } from './http-contract.ts';

eachEngine('GET /api/messages/{id}', (_engine, shared) => {
  it('200 with the message and ETag "<version>"', async () => {
    const { inject, create } = shared();
    const message = await create();
    const response = await inject({ url: `/api/messages/${message.id}` });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers.etag, '"1"');
    assert.deepEqual(response.json(), message);
    await inject({
      method: 'PUT',
      url: `/api/messages/${message.id}`,
      payload: { content: 'edited' },
    });
    assert.equal((await inject({ url: `/api/messages/${message.id}` })).headers.etag, '"2"');
  });

  it('the id matches case-insensitively and comes back lowercase', async () => {
    const { inject, create } = shared();
    const message = await create();
    const response = await inject({ url: `/api/messages/${message.id.toUpperCase()}` });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().id, message.id);
  });

  it('404 for a well-formed id that is not stored', async () => {
    const { inject } = shared();
    const response = await inject({ url: '/api/messages/00000000-0000-7000-8000-000000000000' });
    assertProblem(response, 404, 'not-found');
  });

  it('404 for an id of any other shape (never 400)', async () => {
    const { inject } = shared();
    for (const id of [
      'abc',
      '123',
      'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
      '%20',
      'a'.repeat(300),
    ]) {
      assertProblem(await inject({ url: `/api/messages/${id}` }), 404, 'not-found');
    }
  });

  it('If-None-Match with the current ETag gives 304 with the ETag and no body', async () => {
    const { inject, create } = shared();
    const message = await create();
    const response = await inject({
      url: `/api/messages/${message.id}`,
      headers: { 'if-none-match': '"1"' },
    });
    assert.equal(response.statusCode, 304);
    assert.equal(response.headers.etag, '"1"');
    assert.equal(response.body, '');
  });

  it('If-None-Match compares weakly, takes a list and *', async () => {
    const { inject, create } = shared();
    const message = await create();
    const url = `/api/messages/${message.id}`;
    for (const value of ['W/"1"', '"7", "1"', '"7",W/"1"', '*', ' "1" ']) {
      const response = await inject({ url, headers: { 'if-none-match': value } });
      assert.equal(response.statusCode, 304, value);
    }
    for (const value of ['"2"', 'W/"2", "3"', '"01"']) {
      const response = await inject({ url, headers: { 'if-none-match': value } });
      assert.equal(response.statusCode, 200, value);
      assert.deepEqual(response.json(), message);
    }
  });

  it('an old ETag no longer matches after an edit', async () => {
    const { inject, create } = shared();
    const message = await create();
    const url = `/api/messages/${message.id}`;
    await inject({ method: 'PUT', url, payload: { content: 'edited' } });
    const response = await inject({ url, headers: { 'if-none-match': '"1"' } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().content, 'edited');
  });

  it('a malformed If-None-Match is a 400 naming the header', async () => {
    const { inject, create } = shared();
    const message = await create();
    for (const value of ['1', 'W/1', '"1', 'abc, "1"']) {
      const response = await inject({
        url: `/api/messages/${message.id}`,
        headers: { 'if-none-match': value },
      });
      const error = onlyError(assertProblem(response, 400, 'validation'));
      assert.equal(error.header, 'if-none-match');
    }
  });

  it('the service does not compress: identity body, strong ETag, even when gzip is accepted', async () => {
    const { inject, create } = shared();
    const message = await create({ content: 'compressible '.repeat(300) });
    for (const url of [`/api/messages/${message.id}`, '/api/messages?limit=1000']) {
      const response = await inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-encoding'], undefined, url);
      JSON.parse(response.body);
    }
    const one = await inject({
      url: `/api/messages/${message.id}`,
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(one.headers.etag, '"1"');
  });

  it('HEAD answers like GET without a body', async () => {
    const { inject, create } = shared();
    const message = await create();
    const response = await inject({ method: 'HEAD', url: `/api/messages/${message.id}` });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers.etag, '"1"');
    assert.equal(response.body, '');
  });
});
