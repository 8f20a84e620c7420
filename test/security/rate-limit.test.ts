/**
 * Rate limits: separate write and read budgets per client (token subject, or
 * address), the IETF draft's RateLimit-Policy / RateLimit headers on every
 * /api answer, 429 problems with Retry-After, `off`, and a budget shared by
 * two instances through Redis (per instance without it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ConfigError, loadConfig, type Config } from '../../src/config.ts';
import { sqliteEngine } from '../support/engines.ts';
import { skipUnless } from '../support/prerequisites.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { AUTH, bearer, token } from '../auth/tokens.ts';
import { REDIS_URL, deleteKeys, redisAvailable, uniquePrefix } from './redis-support.ts';

const WINDOW = 60;
const LIMITS: Partial<Config> = {
  rateLimitWrite: { max: 3, windowSeconds: WINDOW },
  rateLimitRead: { max: 5, windowSeconds: WINDOW },
};

const post = (headers: Record<string, string> = {}, remoteAddress?: string): InjectOptions => ({
  method: 'POST',
  url: '/api/messages',
  headers,
  payload: { author: 'ada', content: 'hi' },
  ...(remoteAddress === undefined ? {} : { remoteAddress }),
});

/** The `r` and `t` of a RateLimit header for this policy name. */
function rateLimit(response: LightMyRequestResponse, name: string): { r: number; t: number } {
  const match = new RegExp(`^"${name}";r=(\\d+);t=(\\d+)$`).exec(
    String(response.headers.ratelimit),
  );
  assert.ok(match, `RateLimit header: ${String(response.headers.ratelimit)}`);
  return { r: Number(match[1]), t: Number(match[2]) };
}

function assertLimited(response: LightMyRequestResponse, name: string, max: number): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const problem = response.json();
  assert.equal(problem.type, '/problems/rate-limited');
  assert.equal(problem.status, 429);
  assert.equal(typeof problem.detail, 'string');
  assert.equal(typeof problem.instance, 'string');
  assert.equal(response.headers['ratelimit-policy'], `"${name}";q=${max};w=${WINDOW}`);
  const { r, t } = rateLimit(response, name);
  assert.equal(r, 0);
  assert.ok(t >= 1 && t <= WINDOW, `t=${t}`);
  assert.equal(response.headers['retry-after'], String(t));
}

describe('rate limits', () => {
  it('defaults to 50 writes and 600 reads per 10 s, and can be turned off', () => {
    const config = loadConfig({});
    assert.deepEqual(config.rateLimitWrite, { max: 50, windowSeconds: 10 });
    assert.deepEqual(config.rateLimitRead, { max: 600, windowSeconds: 10 });
    const off = loadConfig({ RATE_LIMIT_WRITE: 'off', RATE_LIMIT_READ: 'OFF' });
    assert.equal(off.rateLimitWrite, null);
    assert.equal(off.rateLimitRead, null);
    for (const bad of ['50', '0/10', '10/0', 'fifty/10', '-1/10']) {
      assert.throws(() => loadConfig({ RATE_LIMIT_WRITE: bad }), ConfigError);
    }
  });

  describe('on one instance', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(sqliteEngine, LIMITS);
    });
    after(async () => t?.close());

    it('counts writes and reads in separate budgets, with the draft headers on every answer', async () => {
      const client = '192.0.2.10';
      for (let i = 1; i <= 3; i++) {
        const response = await t.app.http.inject(post({}, client));
        assert.equal(response.statusCode, 201);
        assert.equal(response.headers['ratelimit-policy'], `"write";q=3;w=${WINDOW}`);
        const { r, t: reset } = rateLimit(response, 'write');
        assert.equal(r, 3 - i);
        assert.ok(reset >= 1 && reset <= WINDOW);
      }
      assertLimited(await t.app.http.inject(post({}, client)), 'write', 3);
      // PUT and DELETE spend the same budget.
      const put = await t.app.http.inject({
        method: 'PUT',
        url: '/api/messages/01890a5d-ac96-774b-bcce-b302099a8057',
        payload: { content: 'x' },
        remoteAddress: client,
      });
      assertLimited(put, 'write', 3);

      for (let i = 1; i <= 5; i++) {
        const read = await t.app.http.inject({ url: '/api/messages', remoteAddress: client });
        assert.equal(read.statusCode, 200);
        assert.equal(read.headers['ratelimit-policy'], `"read";q=5;w=${WINDOW}`);
        assert.equal(rateLimit(read, 'read').r, 5 - i);
      }
      assertLimited(
        await t.app.http.inject({ url: '/api/messages', remoteAddress: client }),
        'read',
        5,
      );
    });

    it('keys the budget by client address when auth is off', async () => {
      for (let i = 0; i < 3; i++) await t.app.http.inject(post({}, '192.0.2.20'));
      assertLimited(await t.app.http.inject(post({}, '192.0.2.20')), 'write', 3);
      assert.equal((await t.app.http.inject(post({}, '192.0.2.21'))).statusCode, 201);
    });

    it('limits /readyz and /metrics with the read budget', async () => {
      for (const url of ['/readyz', '/metrics']) {
        const client = url === '/readyz' ? '192.0.2.31' : '192.0.2.32';
        for (let i = 1; i <= 5; i++) {
          const response = await t.app.http.inject({ url, remoteAddress: client });
          assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
          assert.equal(rateLimit(response, 'read').r, 5 - i);
        }
        assertLimited(await t.app.http.inject({ url, remoteAddress: client }), 'read', 5);
      }
    });

    it('does not limit the pages and liveness', async () => {
      for (let i = 0; i < 8; i++) {
        const health = await t.app.http.inject({ url: '/healthz', remoteAddress: '192.0.2.30' });
        assert.equal(health.statusCode, 200);
        assert.equal(health.headers.ratelimit, undefined);
        const page = await t.app.http.inject({ url: '/', remoteAddress: '192.0.2.30' });
        assert.equal(page.statusCode, 200);
        assert.equal(page.headers.ratelimit, undefined);
      }
    });
  });

  it('keys the budget by token subject when auth is on, after authentication', async () => {
    const t = await startTestApp(sqliteEngine, { ...AUTH, ...LIMITS });
    try {
      const ada = bearer(await token({ sub: 'ada' }));
      const bob = bearer(await token({ sub: 'bob' }));
      const send = (headers: Record<string, string>) =>
        t.app.http.inject({ ...post(headers), payload: { content: 'hi' } });
      for (let i = 0; i < 3; i++) assert.equal((await send(ada)).statusCode, 201);
      assertLimited(await send(ada), 'write', 3);
      // Same address, another subject: its own budget.
      assert.equal((await send(bob)).statusCode, 201);
      // Without a token it is a 401, never a 429, and it spends nothing.
      for (let i = 0; i < 5; i++) assert.equal((await send({})).statusCode, 401);
    } finally {
      await t.close();
    }
  });

  it('limits POST /auth/dev-token with the write budget', async () => {
    const t = await startTestApp(sqliteEngine, { ...AUTH, ...LIMITS, authDevTokens: true });
    try {
      const mint = () =>
        t.app.http.inject({
          method: 'POST',
          url: '/auth/dev-token',
          payload: { name: 'ada' },
          remoteAddress: '192.0.2.33',
        });
      for (let i = 0; i < 3; i++) assert.equal((await mint()).statusCode, 200);
      assertLimited(await mint(), 'write', 3);
    } finally {
      await t.close();
    }
  });

  it('sends no rate-limit headers when the budgets are off', async () => {
    const t = await startTestApp(sqliteEngine);
    try {
      for (let i = 0; i < 5; i++) {
        const response = await t.app.http.inject(post());
        assert.equal(response.statusCode, 201);
        assert.equal(response.headers.ratelimit, undefined);
        assert.equal(response.headers['ratelimit-policy'], undefined);
      }
    } finally {
      await t.close();
    }
  });

  it('keeps one budget per instance without Redis', async () => {
    const a = await startTestApp(sqliteEngine, LIMITS);
    const b = await startTestApp(sqliteEngine, LIMITS);
    try {
      for (let i = 0; i < 3; i++) await a.app.http.inject(post({}, '192.0.2.40'));
      assertLimited(await a.app.http.inject(post({}, '192.0.2.40')), 'write', 3);
      assert.equal((await b.app.http.inject(post({}, '192.0.2.40'))).statusCode, 201);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('lets requests through, unlimited, when Redis cannot be reached', async () => {
    const t = await startTestApp(sqliteEngine, { ...LIMITS, redisUrl: 'redis://127.0.0.1:1' });
    try {
      for (let i = 0; i < 5; i++) {
        const response = await t.app.http.inject(post());
        assert.equal(response.statusCode, 201);
        assert.equal(response.headers.ratelimit, undefined);
      }
    } finally {
      await t.close();
    }
  });

  describe('shared through Redis', async () => {
    const skip = skipUnless(await redisAvailable(), `Redis at ${REDIS_URL}`);
    const prefix = uniquePrefix();
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      if (skip) return;
      const shared = { ...LIMITS, redisUrl: REDIS_URL, redisKeyPrefix: prefix };
      a = await startTestApp(sqliteEngine, shared);
      b = await startTestApp(sqliteEngine, shared);
    });
    after(async () => {
      await a?.close();
      await b?.close();
      if (!skip) await deleteKeys(prefix);
    });

    it('spends one budget across two instances', { skip }, async () => {
      const client = '192.0.2.50';
      assert.equal((await a.app.http.inject(post({}, client))).statusCode, 201);
      const second = await b.app.http.inject(post({}, client));
      assert.equal(second.statusCode, 201);
      assert.equal(rateLimit(second, 'write').r, 1);
      assert.equal((await a.app.http.inject(post({}, client))).statusCode, 201);
      assertLimited(await b.app.http.inject(post({}, client)), 'write', 3);
      assertLimited(await a.app.http.inject(post({}, client)), 'write', 3);
      // Reads have their own budget, shared the same way.
      const read = await b.app.http.inject({ url: '/api/messages', remoteAddress: client });
      assert.equal(rateLimit(read, 'read').r, 4);
      assert.ok(
        (await deleteKeys(`${prefix}rate-limit:`)) >= 2,
        'the counters live under the prefix',
      );
    });
  });
});
