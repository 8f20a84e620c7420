/**
 * Authentication: who needs a token, how a refused one is answered (RFC 6750
 * section 3.1), every way a token can be wrong, the precedence of 401, the
 * token in the event stream's URL, and that no log line ever holds a token.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { connectSse } from '../events/sse-client.ts';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  AUDIENCE,
  AUTH,
  ISSUER,
  OTHER_SECRET,
  bearer,
  tamperedPayload,
  token,
  unsecuredToken,
} from './tokens.ts';

const ID = '01890a5d-ac96-774b-bcce-b302099a8057';

function assertProblem(response: LightMyRequestResponse, status: number): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const problem = response.json();
  for (const field of ['type', 'title', 'detail', 'instance']) {
    assert.equal(typeof problem[field], 'string', `problem.${field}`);
  }
  assert.equal(problem.status, status);
  return problem;
}

/** 401 for a request that sent no token: `WWW-Authenticate: Bearer`, no error attribute. */
function assertNoToken(response: LightMyRequestResponse): void {
  const problem = assertProblem(response, 401);
  assert.equal(problem.type, '/problems/unauthorized');
  assert.equal(response.headers['www-authenticate'], 'Bearer');
  assert.equal(response.headers['cache-control'], 'no-cache');
}

/** 401 for a token that was sent and refused: `error="invalid_token"`. */
function assertInvalidToken(response: LightMyRequestResponse): void {
  const problem = assertProblem(response, 401);
  assert.equal(problem.type, '/problems/unauthorized');
  assert.match(String(response.headers['www-authenticate']), /^Bearer error="invalid_token"/);
}

describe('authentication', () => {
  let t: TestApp;
  let log: string[];
  before(async () => {
    log = [];
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => log.push(...chunk.toString('utf8').split('\n')));
    t = await startTestApp(
      sqliteEngine,
      { ...AUTH, logLevel: 'trace', eventsHeartbeatMs: 100 },
      { logStream },
    );
  });
  after(async () => t?.close());

  const inject = (options: InjectOptions) => t.app.http.inject(options);

  it('is off by default: no key configured, no token needed', async () => {
    const config = loadConfig({});
    assert.equal(config.authJwtSecret, null);
    assert.equal(config.authJwksUrl, null);
    const plain = await startTestApp(sqliteEngine);
    try {
      const response = await plain.app.http.inject({ url: '/api/messages' });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['www-authenticate'], undefined);
    } finally {
      await plain.close();
    }
  });

  it('needs a bearer token on every /api endpoint', async () => {
    const requests = [
      { method: 'GET', url: '/api/messages' },
      { method: 'GET', url: `/api/messages/${ID}` },
      { method: 'POST', url: '/api/messages', payload: { content: 'x' } },
      { method: 'PUT', url: `/api/messages/${ID}`, payload: { content: 'x' } },
      { method: 'DELETE', url: `/api/messages/${ID}` },
      { method: 'GET', url: '/api/events' },
      { method: 'GET', url: '/api/no-such-thing' },
      { method: 'GET', url: '/%61pi/messages' },
    ] as const;
    for (const request of requests) assertNoToken(await inject(request));
  });

  it('treats another scheme as no token (no error attribute)', async () => {
    assertNoToken(
      await inject({ url: '/api/messages', headers: { authorization: 'Basic YWRhOnB3' } }),
    );
  });

  it('lets the OpenAPI document, health, docs and CORS preflights through without a token', async () => {
    assert.equal((await inject({ url: '/api/openapi.json' })).statusCode, 200);
    assert.equal((await inject({ url: '/healthz' })).statusCode, 200);
    assert.equal((await inject({ url: '/readyz' })).statusCode, 200);
    const docs = await inject({ url: '/docs' });
    assert.ok(docs.statusCode < 400, `docs answered ${docs.statusCode}`);
    const preflight = await inject({
      method: 'OPTIONS',
      url: '/api/messages',
      headers: { origin: 'http://elsewhere.test', 'access-control-request-method': 'POST' },
    });
    assert.notEqual(preflight.statusCode, 401);
  });

  it('accepts a valid token', async () => {
    const response = await inject({ url: '/api/messages', headers: bearer(await token()) });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('refuses every kind of bad token with error="invalid_token"', async () => {
    const good = await token();
    const bad: Record<string, string> = {
      garbage: 'not-a-jwt',
      'two parts': 'abc.def',
      'empty parts': '..',
      'alg none': unsecuredToken({ sub: 'ada', exp: Math.floor(Date.now() / 1000) + 3600 }),
      'alg none with a signature': `${unsecuredToken({ sub: 'ada' })}${good.split('.')[2]}`,
      'wrong key': await token({ secret: OTHER_SECRET }),
      expired: await token({ expiresIn: -3600 }),
      'not yet valid': await token({ notBefore: 3600 }),
      'no exp': await token({ expiresIn: null }),
      'no sub': await token({ sub: undefined }),
      'blank sub': await token({ sub: '   ' }),
      'sub with a control character': await token({ sub: 'ada\u0007' }),
      'sub of 65 code points': await token({ sub: 'a'.repeat(65) }),
      'sub not a string': await token({ sub: 42 }),
      'payload swapped, signature kept': tamperedPayload(good, { sub: 'root', exp: 9999999999 }),
      'signature removed': good.split('.').slice(0, 2).join('.') + '.',
      'truncated signature': good.slice(0, -5),
    };
    for (const [name, jwt] of Object.entries(bad)) {
      const response = await inject({ url: '/api/messages', headers: bearer(jwt) });
      assert.equal(response.statusCode, 401, `${name}: ${response.body}`);
      assertInvalidToken(response);
    }
    for (const header of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer "quoted"', 'Bearer\tx']) {
      assertInvalidToken(
        await inject({ url: '/api/messages', headers: { authorization: header } }),
      );
    }
  });

  it('allows for clock skew within the tolerance (30 s by default)', async () => {
    const config = loadConfig({ AUTH_JWT_SECRET: AUTH.authJwtSecret! });
    assert.equal(config.authClockToleranceSeconds, 30);
    const justExpired = await token({ expiresIn: -5 });
    const response = await inject({ url: '/api/messages', headers: bearer(justExpired) });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('answers 401 before 413, 415 and 400', async () => {
    const big = 'x'.repeat(t.config.bodyLimit + 10);
    const cases = [
      { headers: { 'content-type': 'application/json' }, payload: `{"content":"${big}"}` },
      { headers: { 'content-type': 'text/plain' }, payload: 'hello' },
      { headers: { 'content-type': 'application/json' }, payload: '{"content":' },
      { headers: { 'content-type': 'application/json' }, payload: '{"content":"","x":1}' },
      {
        headers: { 'content-type': 'application/json', 'idempotency-key': '\u00e9' },
        payload: '{}',
      },
    ];
    for (const c of cases) {
      assertNoToken(await inject({ method: 'POST', url: '/api/messages', ...c }));
    }
    assertNoToken(await inject({ url: '/api/messages?limit=0&order=sideways' }));
    assertNoToken(await inject({ url: '/api/messages/%ZZ' }));
    assertNoToken(await inject({ url: `/api/messages/${'a'.repeat(300)}` }));
    // ...and with a valid token the next error in line is the answer.
    const withToken = await inject({
      method: 'POST',
      url: '/api/messages',
      headers: { ...bearer(await token()), 'content-type': 'text/plain' },
      payload: 'hello',
    });
    assert.equal(withToken.statusCode, 415);
    const odd = await inject({ url: '/api/messages/%ZZ', headers: bearer(await token()) });
    assertProblem(odd, 404);
  });

  it('takes ?access_token= on the event stream, privately cached', async () => {
    const jwt = await token();
    const url = await t.listen();
    const client = await connectSse(`${url}/api/events?access_token=${jwt}`);
    try {
      assert.equal(client.status, 200);
      assert.match(String(client.headers['content-type']), /^text\/event-stream/);
      assert.match(String(client.headers['cache-control']), /^private\b/);
      assert.match(String(client.headers['cache-control']), /\bno-cache\b/);
    } finally {
      client.close();
    }
  });

  it('refuses a bad token in the URL, and a token in both places (400)', async () => {
    const expired = await inject({
      url: `/api/events?access_token=${await token({ expiresIn: -3600 })}`,
    });
    assertInvalidToken(expired);
    assert.equal(expired.headers['cache-control'], 'private, no-cache');

    const jwt = await token();
    const both = await inject({ url: `/api/events?access_token=${jwt}`, headers: bearer(jwt) });
    const problem = assertProblem(both, 400);
    assert.deepEqual(
      (problem.errors as Record<string, string>[]).map((e) => e.parameter),
      ['access_token'],
    );
    assert.equal(both.headers['cache-control'], 'private, no-cache');

    const twice = await inject({ url: `/api/events?access_token=${jwt}&access_token=${jwt}` });
    assertProblem(twice, 400);
  });

  it('does not take a token from the URL anywhere else, and keeps such answers private', async () => {
    const response = await inject({ url: `/api/messages?access_token=${await token()}` });
    assertProblem(response, 401);
    assert.equal(response.headers['www-authenticate'], 'Bearer');
    assert.equal(response.headers['cache-control'], 'private, no-cache');
  });

  it('never writes a token to the log', async () => {
    const good = await token({ sub: 'logged-user' });
    const bad = await token({ secret: OTHER_SECRET });
    const expired = await token({ expiresIn: -3600 });
    await inject({ url: '/api/messages', headers: bearer(good) });
    await inject({ url: '/api/messages', headers: bearer(bad) });
    await inject({ url: `/api/events?access_token=${expired}` });
    await inject({ url: `/api/events?access_token=${good}`, headers: bearer(good) });
    await inject({ url: `/api/messages?room=x&access_token=${good}` });
    await inject({ url: `/api/messages/%ZZ?access_token=${bad}` });
    const text = log.join('\n');
    assert.ok(text.includes('"responseTime"'), 'the log records requests');
    assert.ok(text.includes('[redacted]'), 'the URL token was replaced');
    for (const jwt of [good, bad, expired]) {
      for (const part of jwt.split('.')) {
        assert.ok(!text.includes(part), 'a token part reached the log');
      }
    }
  });

  it('reads access_token by its decoded name, and never logs it however it is spelled', async () => {
    const spellings = ['%61ccess_token', 'access%5Ftoken', 'ACCESS_TOKEN', 'access_token'];
    const sent: string[] = [];
    for (const name of spellings) {
      const expired = await token({ sub: `expired-${name}`, expiresIn: -3600 });
      sent.push(expired);
      const response = await inject({ url: `/api/events?room=x&${name}=${expired}` });
      // Read as the token (decoded, as the redaction reads it): refused as expired.
      assertInvalidToken(response);
      assert.equal(response.headers['cache-control'], 'private, no-cache');
    }
    const good = await token({ sub: 'encoded-name' });
    sent.push(good);
    const base = t.url === '' ? await t.listen() : t.url;
    const client = await connectSse(`${base}/api/events?%61ccess_token=${good}`);
    try {
      assert.equal(client.status, 200);
      assert.match(String(client.headers['cache-control']), /^private, no-cache\b/);
    } finally {
      client.close();
    }
    const text = log.join('\n');
    assert.ok(text.includes('[redacted]'), 'the URL tokens were replaced');
    for (const jwt of sent) {
      for (const part of jwt.split('.')) assert.ok(!text.includes(part), 'a token reached the log');
    }
  });

  it('never echoes a token in a redirect, and keeps the redirect private', async () => {
    const jwt = await token({ sub: 'redirected' });
    for (const name of ['access_token', '%61ccess_token']) {
      const response = await inject({ url: `/api/events/?since=3&${name}=${jwt}&room=x` });
      assert.equal(response.statusCode, 301);
      assert.equal(response.headers.location, '/api/events?since=3&room=x');
      assert.equal(response.headers['cache-control'], 'private, no-cache');
      const only = await inject({ url: `/api/events/?${name}=${jwt}` });
      assert.equal(only.headers.location, '/api/events');
      assert.equal(only.headers['cache-control'], 'private, no-cache');
    }
    const elsewhere = await inject({ url: `/healthz?access_token=${jwt}` });
    assert.equal(elsewhere.statusCode, 200);
    assert.equal(elsewhere.headers['cache-control'], 'private, no-cache');
    // A path the router cannot decode is answered before any hook, and privately too.
    const undecodable = await inject({ url: `/api/messages/%ZZ?%61ccess_token=${jwt}` });
    assert.equal(undecodable.headers['cache-control'], 'private, no-cache');
    const text = log.join('\n');
    for (const part of jwt.split('.')) assert.ok(!text.includes(part), 'the token reached the log');
  });

  it('checks issuer and audience when they are configured', async () => {
    const strict = await startTestApp(sqliteEngine, {
      ...AUTH,
      authIssuer: ISSUER,
      authAudience: AUDIENCE,
    });
    try {
      const get = async (jwt: string) =>
        strict.app.http.inject({ url: '/api/messages', headers: bearer(jwt) });
      assert.equal(
        (await get(await token({ issuer: ISSUER, audience: AUDIENCE }))).statusCode,
        200,
      );
      for (const jwt of [
        await token({ issuer: 'https://evil.test', audience: AUDIENCE }),
        await token({ issuer: ISSUER, audience: 'someone-else' }),
        await token({ audience: AUDIENCE }),
        await token({ issuer: ISSUER }),
      ]) {
        assertInvalidToken(await get(jwt));
      }
    } finally {
      await strict.close();
    }
  });

  it('refuses a short secret, and both key sources at once, at start', () => {
    assert.throws(() => loadConfig({ AUTH_JWT_SECRET: 'short' }), /at least 32 characters/);
    // A refused secret is never repeated in the error line (it ends up in logs); nor is a
    // password in a refused URL.
    assert.throws(
      () => loadConfig({ AUTH_JWT_SECRET: 'almost-the-real-secret' }),
      (error: Error) =>
        !error.message.includes('almost-the-real') && /not shown/.test(error.message),
    );
    for (const url of [
      'mysql://app:hunter2@db.example/chat',
      'postgres://app:hunter2@db:x/chat',
      'postgres://app:hun/ter2@db:x/chat',
      'postgres://app:hun@ter2@db:x/chat',
    ]) {
      assert.throws(
        () => loadConfig({ DATABASE_URL: url }),
        (error: Error) => !/hun|ter2/.test(error.message) && error.message.includes('app:***@db'),
      );
    }
    assert.throws(
      () =>
        loadConfig({ AUTH_JWT_SECRET: AUTH.authJwtSecret!, AUTH_JWKS_URL: 'http://127.0.0.1/k' }),
      /not both/,
    );
  });
});
