/**
 * The development sign-in: POST /auth/dev-token mints a short-lived token for
 * a name, only with AUTH_DEV_TOKENS=true (which needs AUTH_JWT_SECRET).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { loadConfig } from '../../src/config.ts';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { AUDIENCE, AUTH, ISSUER, SECRET, bearer } from './tokens.ts';

async function withApp(
  overrides: Parameters<typeof startTestApp>[1],
  fn: (t: TestApp) => Promise<void>,
) {
  const t = await startTestApp(sqliteEngine, overrides);
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

const mint = (t: TestApp, payload: unknown, contentType = 'application/json') =>
  t.app.http.inject({
    method: 'POST',
    url: '/auth/dev-token',
    headers: { 'content-type': contentType },
    payload: JSON.stringify(payload),
  });

describe('development tokens', () => {
  it('is off unless asked for, and then needs the secret', async () => {
    assert.equal(loadConfig({}).authDevTokens, false);
    assert.throws(() => loadConfig({ AUTH_DEV_TOKENS: 'true' }), /needs AUTH_JWT_SECRET/);
    assert.equal(
      loadConfig({ AUTH_DEV_TOKENS: 'true', AUTH_JWT_SECRET: SECRET }).authDevTokens,
      true,
    );
    await withApp(AUTH, async (t) => {
      assert.equal((await mint(t, { name: 'ada' })).statusCode, 404);
    });
  });

  it('mints a one-hour token for a name that the API accepts', async () => {
    await withApp({ ...AUTH, authDevTokens: true }, async (t) => {
      const response = await mint(t, { name: 'Ada Lovelace ✨' });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['cache-control'], 'no-store');
      const body = response.json();
      assert.equal(body.subject, 'Ada Lovelace ✨');
      assert.equal(body.tokenType, 'Bearer');
      assert.equal(body.expiresIn, 3600);
      const claims = decodeJwt(body.token);
      assert.equal(claims.sub, 'Ada Lovelace ✨');
      assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 3600);
      assert.equal(claims.roles, undefined);

      const created = await t.app.http.inject({
        method: 'POST',
        url: '/api/messages',
        headers: bearer(body.token),
        payload: { content: 'signed in' },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().author, 'Ada Lovelace ✨');
    });
  });

  it('mints admin tokens on request, with the configured issuer and audience', async () => {
    await withApp(
      { ...AUTH, authDevTokens: true, authIssuer: ISSUER, authAudience: AUDIENCE },
      async (t) => {
        const body = (await mint(t, { name: 'root', admin: true })).json();
        const claims = decodeJwt(body.token);
        assert.deepEqual(claims.roles, ['admin']);
        assert.equal(claims.iss, ISSUER);
        assert.equal(claims.aud, AUDIENCE);
        const list = await t.app.http.inject({ url: '/api/messages', headers: bearer(body.token) });
        assert.equal(list.statusCode, 200);
      },
    );
  });

  it('refuses names that are not valid authors, unknown fields and other media types', async () => {
    await withApp({ ...AUTH, authDevTokens: true }, async (t) => {
      for (const payload of [
        {},
        { name: '' },
        { name: '   ' },
        { name: 'a\u0000b' },
        { name: 'x'.repeat(65) },
        { name: 42 },
        { name: 'ada', extra: 1 },
        { name: 'ada', admin: 'yes' },
      ]) {
        const response = await mint(t, payload);
        assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      }
      assert.equal((await mint(t, { name: 'ada' }, 'text/plain')).statusCode, 415);
    });
  });

  it('is not part of the API document', async () => {
    await withApp({ ...AUTH, authDevTokens: true }, async (t) => {
      const doc = (await t.app.http.inject({ url: '/api/openapi.json' })).json();
      assert.equal(doc.paths['/auth/dev-token'], undefined);
    });
  });
});
