/** DELETE /api/messages/{id}: 200 with the message as it was, then 404 everywhere; If-Match. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertProblem, eachEngine } from './http-contract.ts';

eachEngine('DELETE /api/messages/{id}', (_engine, shared) => {
  it('200 with the message as it was when deleted', async () => {
    const { inject, create } = shared();
    const message = await create();
    const edited = (
      await inject({ method: 'PUT', url: `/api/messages/${message.id}`, payload: { content: 'e' } })
    ).json();
    const response = await inject({ method: 'DELETE', url: `/api/messages/${message.id}` });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), edited);
  });

  it('afterwards GET, PUT and DELETE of that id give 404', async () => {
    const { inject, create } = shared();
    const message = await create();
    const url = `/api/messages/${message.id}`;
    assert.equal((await inject({ method: 'DELETE', url })).statusCode, 200);
    assertProblem(await inject({ url }), 404, 'not-found');
    assertProblem(await inject({ method: 'PUT', url, payload: { content: 'x' } }), 404);
    assertProblem(await inject({ method: 'DELETE', url }), 404, 'not-found');
    const list = await inject({ url: `/api/messages?id=${message.id}` });
    assert.deepEqual(list.json(), []);
  });

  it('an id is never reused: a create after a delete gets a new, larger id', async () => {
    const { inject, create } = shared();
    const message = await create();
    await inject({ method: 'DELETE', url: `/api/messages/${message.id}` });
    const next = await create();
    assert.ok(next.id > message.id);
    assertProblem(await inject({ url: `/api/messages/${message.id}` }), 404);
  });

  it('the id matches case-insensitively', async () => {
    const { inject, create } = shared();
    const message = await create();
    const response = await inject({
      method: 'DELETE',
      url: `/api/messages/${message.id.toUpperCase()}`,
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().id, message.id);
  });

  it('404 for an id that is not stored, or of any other shape', async () => {
    const { inject } = shared();
    for (const id of ['00000000-0000-7000-8000-000000000000', 'x']) {
      assertProblem(await inject({ method: 'DELETE', url: `/api/messages/${id}` }), 404);
    }
  });

  it('If-Match with a stale or weak ETag is a 412 and keeps the message', async () => {
    const { inject, create } = shared();
    const message = await create();
    const url = `/api/messages/${message.id}`;
    await inject({ method: 'PUT', url, payload: { content: 'v2' } });
    for (const value of ['"1"', 'W/"2"']) {
      assertProblem(
        await inject({ method: 'DELETE', url, headers: { 'if-match': value } }),
        412,
        'precondition-failed',
      );
    }
    assert.equal((await inject({ url })).statusCode, 200);
  });

  it('If-Match with the current ETag, a list holding it, or * deletes', async () => {
    const { inject, create } = shared();
    for (const value of ['"1"', '"5", "1"', '*']) {
      const message = await create();
      const response = await inject({
        method: 'DELETE',
        url: `/api/messages/${message.id}`,
        headers: { 'if-match': value },
      });
      assert.equal(response.statusCode, 200, value);
      assert.deepEqual(response.json(), message);
    }
  });
});
