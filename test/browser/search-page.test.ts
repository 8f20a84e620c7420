/**
 * Search on the chat page in a real browser (Debian's Chromium, headless,
 * driven by playwright-core), auth off: a search over the open room finds a
 * message far back (older than the first page) with its term highlighted as
 * the service matches it (ẞ finds ß); a click shows the page around the
 * message (`around`) and marks it; a search over all rooms finds one in
 * another room, and a click opens that room. No request fails. A screenshot
 * is saved under test-output/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { sqliteEngine } from '../support/engines.ts';
import { CHROMIUM, chromiumAvailable, skipUnless } from '../support/prerequisites.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

const WAIT = { timeout: 15_000 };

describe('search on the chat page', () => {
  const skip = skipUnless(chromiumAvailable(), `Chromium at ${CHROMIUM}`);
  let browser: Browser;
  let t: TestApp;

  before(async () => {
    if (skip) return;
    browser = await launchChromium();
    t = await startTestApp(sqliteEngine, { eventsHeartbeatMs: 1000 });
    await t.listen();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function post(room: string, content: string): Promise<string> {
    const response = await fetch(`${t.url}/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ author: 'bob', room, content }),
    });
    assert.equal(response.status, 201);
    return ((await response.json()) as { id: string }).id;
  }

  it(
    'finds, highlights and jumps to a message, in the room and in all rooms',
    { skip },
    async () => {
      await post('history', 'first words');
      const target = await post('history', 'meet me at the Straße corner');
      // More than two pages after it: the room opens on the latest page, far from it.
      for (let i = 0; i < 120; i++) await post('history', `later message ${i}`);
      const elsewhere = await post('other', 'the strasse is not the STRAẞE');

      const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
      const page: Page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message: ConsoleMessage) => {
        if (message.type() === 'error') {
          errors.push(`${message.text()} (${message.location().url})`);
        }
      });
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${t.url}/`);
      await page.getByLabel('Your name', { exact: true }).fill('ada');
      await page.getByLabel('Room', { exact: true }).fill('history');
      await page.getByRole('button', { name: 'Join' }).click();
      await page.getByRole('status').filter({ hasText: 'Live in history' }).waitFor(WAIT);
      assert.equal(await page.locator(`#messages li[data-id="${target}"]`).count(), 0);

      // This room: one result, the term marked as the service matched it.
      const search = page.getByRole('search', { name: 'Search messages' });
      await search.getByLabel('Search messages').fill('STRAẞE');
      await search.getByRole('button', { name: 'Search' }).click();
      const results = page.locator('#results li.result');
      await page.getByRole('heading', { name: '1 found' }).waitFor(WAIT);
      assert.equal(await results.count(), 1);
      assert.equal(await results.first().locator('mark').textContent(), 'Straße');

      // A click shows the page around the message, and marks it.
      await results.first().getByRole('button').click();
      const found = page.locator(`#messages li[data-id="${target}"]`);
      await found.waitFor(WAIT);
      await page.locator(`#messages li.found[data-id="${target}"]`).waitFor(WAIT);
      assert.ok(await found.isVisible());
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/search-page.png' });

      // All rooms: the other room's message too, newest first; a click opens that room.
      await search.getByLabel('Where to search').selectOption('all');
      await search.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('heading', { name: '2 found' }).waitFor(WAIT);
      const marks = await results.first().locator('mark').allTextContents();
      assert.deepEqual(marks, ['STRAẞE']);
      await results.first().getByRole('button').click();
      await page.getByRole('heading', { name: 'Room other' }).waitFor(WAIT);
      await page.locator(`#messages li[data-id="${elsewhere}"]`).waitFor(WAIT);

      // Nothing found says so; closing the panel hides it.
      await search.getByLabel('Search messages').fill('nothing-like-this');
      await search.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('heading', { name: 'No messages found' }).waitFor(WAIT);
      await page.getByRole('button', { name: 'Close' }).click();
      assert.equal(await page.locator('#search-results').isVisible(), false);
      assert.deepEqual(errors, []);
      await context.close();
    },
  );
});
