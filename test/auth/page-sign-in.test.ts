/**
 * The page's sign-in (public/auth.js) in Chromium, under the service's CSP:
 * a development token for a name, a token handed over in the URL fragment,
 * and no token at all when the service has no development tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { sqliteEngine } from '../support/engines.ts';
import { CHROMIUM, chromiumAvailable, skipUnless } from '../support/prerequisites.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { AUTH, token } from './tokens.ts';

interface Result {
  name: string;
  status: number;
  author: string;
  eventsUrl: string;
  hash: string;
}

/** Signs in through auth.js, then posts through api.js, in the page itself. */
function signInAndPost(page: Page, name: string): Promise<Result> {
  return page.evaluate(`(async () => {
    const auth = await import('/auth.js');
    const api = await import('/api.js');
    const signedIn = await auth.signIn(${JSON.stringify(name)});
    const created = await api.api('POST', '/api/messages', { body: { content: 'from the page' } });
    return {
      name: signedIn,
      status: created.status,
      author: created.body.author,
      eventsUrl: api.eventsUrl({ room: 'general' }),
      hash: location.hash,
    };
  })()`);
}

describe('signing in on the page', () => {
  const skip = skipUnless(chromiumAvailable(), `Chromium at ${CHROMIUM}`);
  let browser: Browser;
  let t: TestApp;
  before(async () => {
    if (skip) return;
    t = await startTestApp(sqliteEngine, { ...AUTH, authDevTokens: true });
    await t.listen();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(path: string): Promise<Page> {
    const page = await browser.newPage();
    page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
    await page.goto(`${t.url}${path}`);
    return page;
  }

  it('gets a development token for the name and sends it', { skip }, async () => {
    const page = await open('/');
    const result = await signInAndPost(page, 'Ada ✨');
    assert.equal(result.name, 'Ada ✨');
    assert.equal(result.status, 201);
    assert.equal(result.author, 'Ada ✨');
    assert.match(result.eventsUrl, /[?&]access_token=[\w-]+\.[\w-]+\.[\w-]+/);
    await page.close();
  });

  it(
    'uses a token handed over in the fragment, and takes its subject as the name',
    { skip },
    async () => {
      const jwt = await token({ sub: 'bob' });
      const page = await open(`/#token=${jwt}`);
      const named = await page.evaluate(`import('/auth.js').then((auth) => auth.signedInName())`);
      assert.equal(named, 'bob');
      const result = await signInAndPost(page, 'somebody else');
      assert.equal(result.name, 'bob');
      assert.equal(result.author, 'bob');
      assert.equal(result.hash, '', 'the token left the address bar');
      await page.close();
    },
  );

  it('sends no token when the service mints none (auth off)', { skip }, async () => {
    const plain = await startTestApp(sqliteEngine);
    try {
      const page = await browser.newPage();
      await page.goto(`${await plain.listen()}/`);
      const result = await page.evaluate(`(async () => {
        const auth = await import('/auth.js');
        const api = await import('/api.js');
        const name = await auth.signIn('carol');
        const created = await api.api('POST', '/api/messages', { body: { author: name, content: 'x' } });
        return { name, author: created.body.author, eventsUrl: api.eventsUrl({}) };
      })()`);
      assert.deepEqual(result, { name: 'carol', author: 'carol', eventsUrl: '/api/events?' });
      await page.close();
    } finally {
      await plain.close();
    }
  });
});
