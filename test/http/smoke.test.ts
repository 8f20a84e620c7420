import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { engines } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

for (const engine of engines) {
  describe(`smoke (${engine.name})`, async () => {
    const skip = await engine.unavailable();
    let t: TestApp;
    before(async () => {
      if (!skip) t = await startTestApp(engine);
    });
    after(async () => t?.close());

    it('creates, reads, edits, lists and deletes a message', { skip }, async () => {
      const created = await t.app.http.inject({
        method: 'POST',
        url: '/api/messages',
        payload: { author: 'ada', content: 'hello 👋' },
      });
      assert.equal(created.statusCode, 201);
      const message = created.json();
      const got = await t.app.http.inject({ url: `/api/messages/${message.id.toUpperCase()}` });
      assert.deepEqual(got.json(), message);
      const put = await t.app.http.inject({
        method: 'PUT',
        url: `/api/messages/${message.id}`,
        payload: { ...message, content: 'edited' },
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.equal(put.json().version, 2);
      const list = await t.app.http.inject({ url: '/api/messages' });
      assert.equal(list.json().length, 1);
      assert.equal(list.headers['event-seq'], '2');
      const del = await t.app.http.inject({ method: 'DELETE', url: `/api/messages/${message.id}` });
      assert.equal(del.statusCode, 200);
      assert.equal(
        (await t.app.http.inject({ url: `/api/messages/${message.id}` })).statusCode,
        404,
      );
    });
  });
}
