/**
 * The response headers the document declares on every answer (X-Request-Id,
 * RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate) are sent as it
 * says: answers with rate limits on, a spent budget and a refused token go
 * through the checked inject, which validates each declared header it finds.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sqliteEngine } from '../support/engines.ts';
import { withApp } from './http-contract.ts';

it('rate-limit headers and Retry-After match their declarations, up to the 429', async () => {
  await withApp(
    sqliteEngine,
    async ({ inject, conformance }) => {
      const headers = conformance.document.components?.headers ?? {};
      assert.deepEqual(Object.keys(headers).sort(), [
        'Cache-Control',
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
        'WWW-Authenticate',
        'X-Request-Id',
      ]);
      const first = await inject({
        url: '/api/messages?limit=1',
        headers: { 'x-request-id': 'r-1' },
      });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['x-request-id'], 'r-1');
      assert.equal(first.headers['cache-control'], 'no-cache');
      assert.equal(first.headers['ratelimit-policy'], '"read";q=3;w=60');
      assert.equal(first.headers.ratelimit, '"read";r=1;t=60');
      assert.match(String(first.headers['event-seq']), /^[0-9]+$/);
      await inject({ url: '/api/rooms' });
      const refused = await inject({ url: '/api/rooms' });
      assert.equal(refused.statusCode, 429);
      assert.match(String(refused.headers['retry-after']), /^[0-9]+$/);
      assert.match(String(refused.headers.ratelimit), /^"read";r=0;t=[0-9]+$/);
    },
    // Three: fetching the document for the checks spends one.
    { rateLimitRead: { max: 3, windowSeconds: 60 } },
  );
});

it('a 401 carries WWW-Authenticate as declared', async () => {
  await withApp(
    sqliteEngine,
    async ({ inject }) => {
      const refused = await inject({ url: '/api/rooms' });
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.headers['www-authenticate'], 'Bearer');
    },
    { authJwtSecret: 'x'.repeat(32) },
  );
});
