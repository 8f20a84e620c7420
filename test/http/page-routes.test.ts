/**
 * What the chat page gets that is not a file of public/: /page-settings.js
 * (the change kinds, and whether auth is on, so the page asks for a token
 * only when one is needed) and /favicon.ico.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CHANGE_KINDS } from '../../src/domain/change.ts';
import { PUBLIC_DIR } from '../../src/http/page-routes.ts';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { AUTH } from '../auth/tokens.ts';

/** The module as the browser runs it. */
async function settingsOf(t: TestApp) {
  const response = await t.app.http.inject({ url: '/page-settings.js' });
  assert.equal(response.statusCode, 200);
  assert.match(response.headers['content-type'] as string, /^text\/javascript/);
  assert.equal(response.headers['cache-control'], 'no-cache');
  return import(`data:text/javascript,${encodeURIComponent(response.body)}`);
}

for (const [label, overrides, auth] of [
  ['auth off', {}, { required: false, devTokens: false }],
  ['auth on', AUTH, { required: true, devTokens: false }],
  [
    'auth on with dev tokens',
    { ...AUTH, authDevTokens: true },
    { required: true, devTokens: true },
  ],
] as const) {
  describe(`page routes, ${label}`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(sqliteEngine, overrides);
    });
    after(async () => {
      await t.close();
    });

    it('/page-settings.js says whether auth is on, and lists every change kind', async () => {
      const settings = await settingsOf(t);
      assert.deepEqual(settings.auth, auth);
      assert.deepEqual(settings.changeKinds, CHANGE_KINDS);
    });

    it('/favicon.ico is the page’s SVG icon, with no token needed', async () => {
      const svg = readFileSync(`${PUBLIC_DIR}favicon.svg`);
      for (const url of ['/favicon.ico', '/favicon.svg']) {
        const response = await t.app.http.inject({ url });
        assert.equal(response.statusCode, 200, url);
        assert.match(response.headers['content-type'] as string, /^image\/svg\+xml/, url);
        assert.deepEqual(response.rawPayload, svg, url);
      }
    });
  });
}
