/**
 * BATCHING=off (docs/schedulers.md): every per-turn scheduler off, the API
 * keeps its HTTP behaviour. A representative part of it on both engines, over a
 * real socket, with requests in parallel so that the unbatched paths (each
 * request at once, each read and write alone) run side by side.
 */
import assert from 'node:assert/strict';
import { it, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { Message } from '../../src/domain/message.ts';
import { assertProblem, eachEngine, uniqueRoom } from './http-contract.ts';

test('BATCHING: on by default, off turns it off, any other value stops the start', () => {
  assert.equal(loadConfig({}).batching, true);
  assert.equal(loadConfig({ BATCHING: 'off' }).batching, false);
  assert.equal(loadConfig({ BATCHING: 'on' }, ['--batching', 'OFF']).batching, false);
  assert.throws(
    () => loadConfig({ BATCHING: 'false' }),
    (error) => error instanceof ConfigError && /BATCHING="false"/.test(error.message),
  );
});

const json = { 'content-type': 'application/json' };

eachEngine(
  'the API with BATCHING=off',
  (_engine, shared) => {
    it('parallel creates are each stored once, retries replay them, and the list has them in order', async () => {
      const app = shared();
      const room = uniqueRoom();
      const post = (n: number, key?: string) =>
        app.fetch('/api/messages', {
          method: 'POST',
          headers: key === undefined ? json : { ...json, 'idempotency-key': key },
          body: JSON.stringify({ author: 'ada', content: `m${n}`, room }),
        });
      const sent = Array.from({ length: 20 }, (_, n) => n);
      const first = await Promise.all(
        sent.map((n) => post(n, n < 10 ? `${room}-${n}` : undefined)),
      );
      const retried = await Promise.all(sent.slice(0, 10).map((n) => post(n, `${room}-${n}`)));
      for (const { response } of [...first, ...retried]) assert.equal(response.status, 201);
      const created = first.map(({ body }) => JSON.parse(body) as Message);
      for (const [n, { response, body }] of retried.entries()) {
        assert.equal(response.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(JSON.parse(body), created[n]);
      }
      const listed = JSON.parse((await app.fetch(`/api/messages?room=${room}`)).body) as Message[];
      assert.deepEqual(
        listed,
        [...created].sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
    });

    it('read, revalidate, edit with If-Match, a stale edit refused, delete, then gone', async () => {
      const { inject, create } = shared();
      const message = await create({ room: uniqueRoom() });
      const url = `/api/messages/${message.id}`;
      const [read, again] = await Promise.all([
        inject({ url }),
        inject({ url, headers: { 'if-none-match': '"1"' } }),
      ]);
      assert.deepEqual(read.json(), message);
      assert.equal(again.statusCode, 304);
      const edits = await Promise.all(
        ['first', 'second'].map((content) =>
          inject({ method: 'PUT', url, headers: { 'if-match': '"1"' }, payload: { content } }),
        ),
      );
      assert.deepEqual(edits.map((e) => e.statusCode).sort(), [200, 412]);
      assert.equal((await inject({ url })).headers.etag, '"2"');
      assert.equal((await inject({ method: 'DELETE', url })).statusCode, 200);
      assertProblem(await inject({ url }), 404, 'not-found');
    });

    it('pages with Link, an id list, and Event-Seq counting every change', async () => {
      const { inject, create } = shared();
      const room = uniqueRoom();
      const made: Message[] = [];
      for (let i = 0; i < 5; i += 1) made.push(await create({ room }));
      const page = await inject({ url: `/api/messages?room=${room}&limit=3&order=desc` });
      assert.deepEqual(
        (page.json() as Message[]).map((m) => m.id),
        made
          .slice(2)
          .reverse()
          .map((m) => m.id),
      );
      assert.match(String(page.headers.link), /rel="next"/);
      const byIds = await inject({
        url: `/api/messages?id=${made[4]!.id}&id=${made[0]!.id}`,
      });
      assert.deepEqual(byIds.json(), [made[0], made[4]]);
      const seq = Number(page.headers['event-seq']);
      await create({ room });
      const after = await inject({ url: `/api/messages?room=${room}&limit=1` });
      assert.equal(Number(after.headers['event-seq']), seq + 1);
    });
  },
  { batching: false },
);
