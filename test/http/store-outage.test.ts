/**
 * 503 when the store is unreachable, and recovery by itself when it is back
 * (docs/errors.md; /readyz). PostgreSQL is reached through a TCP
 * proxy that the test closes and reopens: a real outage, on a private port.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresEngine, skipUnlessEngine } from '../support/engines.ts';
import { PG_BASE_URL } from '../support/prerequisites.ts';
import { assertProblem, startContractApp, type ContractApp } from './http-contract.ts';
import { TcpProxy } from './tcp-proxy.ts';

const skip = await skipUnlessEngine(postgresEngine);

/** Polls `probe` until it is true (bounded: the service recovers "by itself" (docs/errors.md), not at once). */
async function eventually(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`${what} did not happen within 10 s`);
}

describe('store outage [postgres]', { skip }, () => {
  it('503 with Retry-After while the store is down, then recovers by itself', async () => {
    const db = await postgresEngine.createDatabase();
    const target = new URL(PG_BASE_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    let app: ContractApp | undefined;
    try {
      app = await startContractApp(
        postgresEngine,
        { databaseUrl: viaProxy.toString(), storeTimeoutMs: 1000 },
        {},
        { url: viaProxy.toString(), cleanup: async () => undefined },
      );
      const { inject } = app;
      const created = await app.create({ content: 'before the outage' });
      assert.equal((await inject({ url: '/readyz' })).statusCode, 200);

      await proxy.stop();

      const ready = await inject({ url: '/readyz' });
      assertProblem(ready, 503, 'unavailable');
      assert.ok(ready.headers['retry-after'], 'Retry-After on /readyz');
      const requests = [
        { url: '/api/messages' },
        { url: '/api/messages?limit=5' },
        { url: `/api/messages/${created.id}` },
        { method: 'POST' as const, url: '/api/messages', payload: { author: 'a', content: 'b' } },
        {
          method: 'PUT' as const,
          url: `/api/messages/${created.id}`,
          payload: { content: 'edited' },
        },
        { method: 'DELETE' as const, url: `/api/messages/${created.id}` },
      ];
      for (const request of requests) {
        const response = await inject(request);
        assertProblem(response, 503, 'unavailable');
        assert.ok(response.headers['retry-after'], `Retry-After on ${request.url}`);
        assert.equal(response.headers['cache-control'], 'no-cache');
      }
      // A client that got a 503 retries with the same Idempotency-Key.
      const retried = {
        method: 'POST' as const,
        url: '/api/messages',
        headers: { 'idempotency-key': 'during-outage' },
        payload: { author: 'ada', content: 'retried' },
      };
      assertProblem(await inject(retried), 503);
      assert.equal((await inject({ url: '/healthz' })).statusCode, 200, 'still alive');

      await proxy.start();

      await eventually(
        async () => (await inject({ url: '/readyz' })).statusCode === 200,
        '/readyz 200',
      );
      const after = await inject(retried);
      assert.equal(after.statusCode, 201, after.body);
      assert.equal(after.headers['idempotent-replayed'], undefined, 'the 503 was not kept');
      const list = await inject({ url: '/api/messages' });
      assert.deepEqual(
        list.json().map((m: { content: string }) => m.content),
        ['before the outage', 'retried'],
        'nothing from the outage was half-written',
      );
    } finally {
      await proxy.stop();
      await app?.close();
      await db.cleanup();
    }
  });
});
