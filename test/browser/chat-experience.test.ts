/**
 * The chat page as a chat user judges it, in a real browser (Debian's
 * Chromium, headless, driven by playwright-core), auth off: day separators
 * and dates on older messages; an empty room that says so; older history
 * loading as you scroll up, the view kept steady, stopping at the room's
 * start; edit and delete as hover (and focus) actions, edits with If-Match,
 * delete with undo; a banner while the server is away that goes when it is
 * back; a favicon; a search result that opens the page around the message
 * (`around`) and grows both ways as you scroll. No request fails and the
 * console stays clean. Screenshots are saved under test-output/.
 *
 * Days: the service's clock (AppOptions.now) runs from a fixed Friday
 * morning, moved back by whole days while older messages are written through
 * the API; the page's clock is fixed on that Friday too, in UTC and en-US.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import {
  joinRoom,
  messageItem,
  pageSuite,
  WAIT,
  watchedPage,
  type Watched,
} from '../support/browser.ts';
import { CHROMIUM, chromiumAvailable, skipUnless } from '../support/prerequisites.ts';
import { createMessage } from '../events/event-helpers.ts';

const DAY_MS = 86_400_000;
/** Friday, 20 November 2026, 09:00 UTC: "today" for the service and the page. */
const TODAY = Date.parse('2026-11-20T09:00:00Z');

describe('the chat experience', () => {
  const skip = skipUnless(chromiumAvailable(), `Chromium at ${CHROMIUM}`);
  /** How far the service's clock is set back (whole days), while older messages are written. */
  let daysBack = 0;
  const started = Date.now();
  const now = () => new Date(TODAY + (Date.now() - started) - daysBack * DAY_MS);
  const suite = pageSuite(skip, { now });

  async function open(name: string, room: string): Promise<Watched> {
    const fixedTime = TODAY + 2 * 3_600_000;
    const watched = await watchedPage(suite.browser, `${suite.t.url}/`, { fixedTime });
    await joinRoom(watched.page, room, name);
    await watched.page.getByRole('heading', { name: `Room ${room}` }).waitFor(WAIT);
    return watched;
  }

  async function join(page: Page, room: string): Promise<void> {
    await joinRoom(page, room);
    await page.getByRole('heading', { name: `Room ${room}` }).waitFor(WAIT);
  }

  const message = messageItem;

  const opacity = (locator: Locator) =>
    locator.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).opacity);

  async function post(room: string, content: string, author = 'carol') {
    return createMessage(suite.t, { author, room, content });
  }

  /** Scrolls the message list to its top (`top`) or its bottom, as a reader would. */
  async function scroll(page: Page, to: 'top' | 'bottom') {
    await page
      .locator('#messages')
      .evaluate((el, top) => (el.scrollTop = top ? 0 : el.scrollHeight), to === 'top');
  }

  /** Scrolls to an end and waits for the page loaded there. */
  async function scrollForMore(page: Page, to: 'top' | 'bottom') {
    const shown = await page.locator('#messages li.message').count();
    await scroll(page, to);
    await page
      .locator('#messages li.message')
      .nth(shown)
      .waitFor({ state: 'attached', ...WAIT });
  }

  it('separates days, dates older messages, and says when a room is empty', { skip }, async () => {
    daysBack = 3;
    await post('days', 'from Tuesday');
    daysBack = 1;
    await post('days', 'from yesterday');
    daysBack = 0;
    await post('days', 'from this morning');

    const { page, problems } = await open('ada', 'days');
    await message(page, 'from this morning').waitFor(WAIT);
    assert.deepEqual(await page.locator('#messages li.day').allTextContents(), [
      'Tuesday, November 17',
      'Yesterday',
      'Today',
    ]);
    // Each separator sits right above the first message of its day.
    const order = await page
      .locator('#messages > li')
      .evaluateAll((items) =>
        items.map((li) => (li.classList.contains('message') ? 'message' : li.className)),
      );
    assert.deepEqual(order, ['start', 'day', 'message', 'day', 'message', 'day', 'message']);
    // Today's message shows its time; older ones their date too.
    const time = (text: string) => message(page, text).locator('time').textContent();
    assert.match((await time('from this morning')) ?? '', /^09:0\d\sAM$/);
    assert.match((await time('from yesterday')) ?? '', /^Nov 19, 09:0\d\sAM$/);
    assert.match((await time('from Tuesday')) ?? '', /^Nov 17, 09:0\d\sAM$/);
    assert.equal(await page.locator('#empty-room').isVisible(), false);
    await page.screenshot({ path: 'test-output/chat-day-separators.png' });

    // A room without messages says so, until the first one arrives.
    await join(page, 'quiet');
    const empty = page.locator('#empty-room');
    await empty.waitFor({ state: 'visible', ...WAIT });
    assert.equal(
      (await empty.textContent())?.trim(),
      'No messages here yet. Be the first to say hello!',
    );
    await page.screenshot({ path: 'test-output/chat-empty-room.png' });
    await page.getByLabel('Message', { exact: true }).fill('hello, quiet room');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await message(page, 'hello, quiet room').waitFor(WAIT);
    assert.equal(await empty.isVisible(), false);
    assert.deepEqual(problems, []);
  });

  it(
    'loads older history as you scroll up, keeps the view steady, stops at the start',
    {
      skip,
    },
    async () => {
      for (let i = 0; i < 120; i++) await post('long', `long ${i}`);
      const { page, problems, requests } = await open('ada', 'long');
      await message(page, 'long 119').waitFor(WAIT);
      assert.equal(await page.locator('#messages li.message').count(), 50);
      assert.equal(await message(page, 'long 69').count(), 0);

      // Scrolled to the top: the page before it arrives above, and what you looked at stays put.
      const oldest = message(page, 'long 70');
      // Where it is the moment the list reaches the top, before the scroll event is handled.
      const y = await oldest.evaluate((li) => {
        li.closest('ol')!.scrollTop = 0;
        return li.getBoundingClientRect().y;
      });
      await message(page, 'long 20').waitFor({ state: 'attached', ...WAIT });
      assert.equal(await page.locator('#messages li.message').count(), 100);
      assert.ok(Math.abs((await oldest.boundingBox())!.y - y) <= 1, 'the view moved');
      const firstId = await message(page, 'long 70').getAttribute('data-id');
      const older = requests.filter((r) => r.includes('before='));
      assert.equal(older.length, 1);
      assert.match(older[0]!, /room=long/);
      assert.match(older[0]!, /order=desc/);
      assert.match(older[0]!, /limit=50/);
      assert.ok(older[0]!.includes(`before=${firstId}`), older[0]);

      // Up again: the last 20, then no more Link: the room's start, and no further request.
      await scroll(page, 'top');
      await message(page, 'long 0').waitFor({ state: 'attached', ...WAIT });
      await page.locator('#messages li.start').waitFor({ state: 'attached', ...WAIT });
      assert.equal(await page.locator('#messages li.message').count(), 120);
      await scroll(page, 'top');
      await page.getByRole('button', { name: 'Load older messages' }).waitFor({ state: 'hidden' });
      // A message sent now still shows: the stream and the page are live.
      await post('long', 'after all that');
      await message(page, 'after all that').waitFor(WAIT);
      assert.equal(requests.filter((r) => r.includes('before=')).length, 2);
      assert.deepEqual(problems, []);
    },
  );

  it(
    'edits and deletes through hover actions, reachable by keyboard, with undo',
    {
      skip,
    },
    async () => {
      await post('acts', 'not yours', 'carol');
      const { page, problems, requests } = await open('ada', 'acts');
      await page.getByLabel('Message', { exact: true }).fill('mine to change');
      await page.getByLabel('Message', { exact: true }).press('Enter');
      const mine = message(page, 'mine to change');
      await mine.waitFor(WAIT);

      // No buttons under every message: they float in on hover; others' have no Edit or Delete.
      const notYours = message(page, 'not yours');
      assert.equal(await notYours.getByRole('button', { name: /^(Edit|Delete)$/ }).count(), 0);
      assert.equal(await notYours.getByRole('button', { name: 'Reply' }).count(), 1);
      const actions = mine.locator('.actions');
      await page.mouse.move(0, 0);
      assert.equal(await opacity(actions), '0');
      await mine.hover();
      assert.equal(await opacity(actions), '1');
      await page.screenshot({ path: 'test-output/chat-actions.png' });
      await page.mouse.move(0, 0);
      assert.equal(await opacity(actions), '0');

      // By keyboard: from the list, Tab reaches Edit (past the Reply and React of each message
      // before it), and focus shows the actions.
      await page.locator('#messages').focus();
      for (let i = 0; i < 8 && (await page.locator(':focus').textContent()) !== 'Edit'; i++) {
        await page.keyboard.press('Tab');
      }
      assert.equal(await page.locator(':focus').textContent(), 'Edit');
      assert.equal(await mine.locator('.edit:focus').count(), 1);
      assert.equal(await opacity(actions), '1');

      // Edit, with the version it started from as If-Match.
      const put = page.waitForRequest(
        (r) => r.method() === 'PUT' && r.url().includes('/messages/'),
      );
      await page.keyboard.press('Enter');
      await mine.getByLabel('Edit message').fill('mine, changed');
      await mine.getByRole('button', { name: 'Save' }).click();
      assert.equal((await put).headers()['if-match'], '"1"');
      const changed = message(page, 'mine, changed');
      await changed.getByText('(edited)').waitFor(WAIT);

      // Delete: gone at once, with an Undo that brings it back and sends nothing.
      const id = (await changed.getAttribute('data-id'))!;
      await changed.hover();
      await changed.getByRole('button', { name: 'Delete' }).click();
      await changed.waitFor({ state: 'detached', ...WAIT });
      const toast = page.locator('#toast');
      await toast.getByText('Message deleted.').waitFor(WAIT);
      await page.screenshot({ path: 'test-output/chat-undo.png' });
      await toast.getByRole('button', { name: 'Undo' }).click();
      await message(page, 'mine, changed').waitFor(WAIT);
      assert.equal(await toast.isVisible(), false);
      assert.equal(requests.filter((r) => r.startsWith('DELETE')).length, 0);
      assert.equal((await suite.t.app.http.inject({ url: `/api/messages/${id}` })).statusCode, 200);

      // The same by keyboard: Delete, then Undo has the focus; undone, focus is back on Delete.
      await message(page, 'mine, changed').getByRole('button', { name: 'Delete' }).focus();
      await page.keyboard.press('Enter');
      await message(page, 'mine, changed').waitFor({ state: 'detached', ...WAIT });
      assert.equal(await page.locator(':focus').textContent(), 'Undo');
      await page.keyboard.press('Enter');
      await message(page, 'mine, changed').waitFor(WAIT);
      assert.equal(await page.locator(':focus').textContent(), 'Delete');
      assert.equal(requests.filter((r) => r.startsWith('DELETE')).length, 0);

      // Delete again and let it be: the DELETE goes out, and the message is gone for good.
      const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE', WAIT);
      await message(page, 'mine, changed').hover();
      await message(page, 'mine, changed').getByRole('button', { name: 'Delete' }).click();
      assert.equal((await deleted).status(), 200);
      await toast.waitFor({ state: 'hidden', ...WAIT });
      assert.equal((await suite.t.app.http.inject({ url: `/api/messages/${id}` })).statusCode, 404);
      assert.equal(await message(page, 'mine, changed').count(), 0);
      assert.deepEqual(problems, []);
    },
  );

  it('serves a favicon', { skip }, async () => {
    const { page, problems } = await open('ada', 'icons');
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    for (const path of [icon!, '/favicon.ico']) {
      const answer = await page.evaluate(async (url) => {
        const response = await fetch(url);
        return { status: response.status, type: response.headers.get('content-type') };
      }, path);
      assert.equal(answer.status, 200, path);
      assert.match(answer.type ?? '', /^image\/svg\+xml/, path);
    }
    assert.deepEqual(problems, []);
  });

  it(
    'shows a banner while the server is away, gone once it is back on its port',
    {
      skip,
    },
    async () => {
      const { page, problems } = await open('bob', 'outage');
      const banner = page.locator('#connection');
      assert.equal(await banner.isVisible(), false);
      assert.deepEqual(problems, []);

      await suite.stop();
      await banner.waitFor({ state: 'visible', ...WAIT });
      assert.match((await banner.textContent()) ?? '', /Connection lost/);
      await page.screenshot({ path: 'test-output/chat-connection-lost.png' });

      await suite.restart();
      await banner.waitFor({ state: 'hidden', ...WAIT });
      await page.getByRole('status').filter({ hasText: 'Live in outage' }).waitFor(WAIT);
      await post('outage', 'back again');
      await message(page, 'back again').waitFor(WAIT);
    },
  );

  it('jumps to a search result with around, then scrolls both ways', { skip }, async () => {
    for (let i = 0; i < 100; i++) await post('deep', `before ${i}`);
    const target = await post('deep', 'the needle in the haystack');
    for (let i = 0; i < 100; i++) await post('deep', `after ${i}`);
    const { page, problems, requests } = await open('ada', 'deep');
    await message(page, 'after 99').waitFor(WAIT);

    const search = page.getByRole('search', { name: 'Search messages' });
    await search.getByLabel('Search messages').fill('needle');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { name: '1 found' }).waitFor(WAIT);
    const seen = requests.length;
    await page.locator('#results li.result').first().getByRole('button').click();

    // Straight there: one read of the page around it, and it is marked.
    const found = page.locator(`#messages li.message.found[data-id="${target.id}"]`);
    await found.waitFor(WAIT);
    assert.ok(await found.isVisible());
    const reads = requests.slice(seen).filter((r) => r.startsWith('GET /api/messages?'));
    assert.equal(reads.length, 1, reads.join('\n'));
    assert.match(reads[0]!, new RegExp(`around=${target.id}`));
    assert.match(reads[0]!, /room=deep/);
    assert.match(reads[0]!, /limit=50/);
    assert.equal(await page.locator('#messages li.message').count(), 50);
    // ⌈50/2⌉ up to it, ⌊50/2⌋ after it.
    assert.equal(await message(page, 'before 76').count(), 1);
    assert.equal(await message(page, 'before 75').count(), 0);
    assert.equal(await message(page, 'after 24').count(), 1);
    assert.equal(await message(page, 'after 25').count(), 0);
    await page.screenshot({ path: 'test-output/chat-search-jump.png' });

    // Down: newer pages (after=) until the newest; then new messages arrive live.
    for (let i = 0; i < 5 && (await message(page, 'after 99').count()) === 0; i++) {
      await scrollForMore(page, 'bottom');
    }
    await message(page, 'after 99').waitFor({ state: 'attached', ...WAIT });
    assert.ok(requests.some((r) => /after=.*order=asc|order=asc.*after=/.test(r)));
    await post('deep', 'brand new');
    await message(page, 'brand new').waitFor({ state: 'attached', ...WAIT });

    // Up: older pages (before=) down to the first message.
    for (let i = 0; i < 5 && (await message(page, 'before 0').count()) === 0; i++) {
      await scrollForMore(page, 'top');
    }
    await message(page, 'before 0').waitFor({ state: 'attached', ...WAIT });
    assert.equal(await page.locator('#messages li.message').count(), 202);
    assert.deepEqual(problems, []);
  });
});
