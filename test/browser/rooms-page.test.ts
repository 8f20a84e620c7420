/**
 * The chat page's rooms in a real browser (Debian's Chromium, headless,
 * driven by playwright-core), with authentication on: Ada creates a private
 * room that Bob cannot see until she invites him; it then appears in his
 * sidebar live, her message there shows as unread for him, and opening it
 * clears the count (his read marker moved on the service too). With auth off
 * the page creates, joins and leaves rooms without a failed request. A
 * screenshot is saved under test-output/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { joinRoom, launchChromium, startSignedInApp, WAIT } from '../support/browser.ts';
import { sqliteEngine } from '../support/engines.ts';
import { CHROMIUM, chromiumAvailable, skipUnless } from '../support/prerequisites.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { bearer, token } from '../auth/tokens.ts';

/** The page's console errors (a failed request shows there as one). */
function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() !== 'error') return;
    errors.push(`${message.text()} (${message.location().url})`);
  });
  return errors;
}

async function openPage(browser: Browser, url: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
  await page.goto(url);
  return page;
}

/** Signs in with a name and opens a room through the header form. */
const join = (page: Page, name: string, room: string) => joinRoom(page, room, name);

const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Your rooms' });
/** A room's item in the list of your rooms. */
const roomItem = (page: Page, room: string) =>
  page.locator('#rooms li.room-item').filter({
    has: page.locator('.room-name').getByText(room, { exact: true }),
  });

async function createRoom(page: Page, room: string, visibility: 'public' | 'private') {
  await sidebar(page).getByLabel('New room').fill(room);
  await sidebar(page)
    .getByLabel('Private')
    .setChecked(visibility === 'private');
  await sidebar(page).getByRole('button', { name: 'Create' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `Live in ${room}` })
    .waitFor(WAIT);
  await page.getByRole('heading', { name: `Room ${room}` }).waitFor(WAIT);
}

async function post(page: Page, content: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(content);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('#messages .content').getByText(content, { exact: true }).waitFor(WAIT);
}

describe('rooms on the chat page', () => {
  const skip = skipUnless(chromiumAvailable(), `Chromium at ${CHROMIUM}`);
  let browser: Browser;

  before(async () => {
    if (skip) return;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  describe('with auth on', () => {
    let t: TestApp;
    before(async () => {
      if (!skip) t = await startSignedInApp();
    });
    after(async () => {
      await t?.close();
    });

    it(
      'a private room: invited live, unread counted live, cleared on opening',
      { skip },
      async () => {
        const ada = await openPage(browser, `${t.url}/`);
        const bob = await openPage(browser, `${t.url}/`);
        const adaErrors = consoleErrors(ada);
        const bobErrors = consoleErrors(bob);
        await join(ada, 'ada', 'general');
        await join(bob, 'bob', 'general');
        await roomItem(bob, 'general').waitFor(WAIT);

        await createRoom(ada, 'plaza', 'public');
        await createRoom(ada, 'secret', 'private');
        await roomItem(ada, 'secret').locator('.lock').waitFor(WAIT);

        // Bob cannot see it: not in his rooms, not among the public rooms he may join.
        await bob.getByText('Public rooms', { exact: true }).click();
        const publicRooms = bob.locator('#public-rooms');
        await publicRooms.getByRole('button', { name: 'plaza' }).waitFor(WAIT);
        assert.equal(await publicRooms.getByRole('button', { name: 'secret' }).count(), 0);
        assert.equal(await roomItem(bob, 'secret').count(), 0);
        await bob.getByText('Public rooms', { exact: true }).click();

        // Ada invites Bob: the room appears in his sidebar while he stays in general.
        await ada.getByLabel('Invite', { exact: true }).fill('bob');
        await ada.getByRole('button', { name: 'Invite' }).click();
        await ada.getByText('bob was added to secret.').waitFor(WAIT);
        await roomItem(bob, 'secret').waitFor(WAIT);
        await roomItem(bob, 'secret').locator('.lock').waitFor(WAIT);
        assert.equal(await roomItem(bob, 'secret').locator('.unread').isVisible(), false);

        // Ada writes there: one unread for Bob, counted live.
        await post(ada, 'psst, Bob');
        const unread = roomItem(bob, 'secret').locator('.unread');
        await unread.waitFor(WAIT);
        assert.match((await unread.textContent()) ?? '', /^[1-9]/);
        // His own room stays read.
        assert.equal(await roomItem(bob, 'general').locator('.unread').isVisible(), false);

        mkdirSync('test-output', { recursive: true });
        await bob.screenshot({ path: 'test-output/rooms-page.png', fullPage: true });

        // Bob opens it: the message is there, the count is gone, and the service agrees.
        await roomItem(bob, 'secret').getByRole('button').click();
        await bob.getByRole('status').filter({ hasText: 'Live in secret' }).waitFor(WAIT);
        await bob
          .locator('#messages .content')
          .getByText('psst, Bob', { exact: true })
          .waitFor(WAIT);
        await unread.waitFor({ state: 'hidden', ...WAIT });
        const marker = await waitForMarker(t, 'secret', 'bob', (m) => m.unread === 0);
        assert.notEqual(marker.lastRead, null);

        // Bob leaves; the room leaves his sidebar, and Ada's stays as it was.
        await bob.getByRole('button', { name: 'Leave room' }).click();
        await roomItem(bob, 'secret').waitFor({ state: 'detached', ...WAIT });
        await bob.getByText('Pick a room on the left, or create one.').waitFor(WAIT);
        assert.equal(await roomItem(ada, 'secret').count(), 1);

        assert.deepEqual(adaErrors, []);
        assert.deepEqual(bobErrors, []);
      },
    );

    it('a topic shows live; being removed by an owner closes the room', { skip }, async () => {
      const ada = bearer(await token({ sub: 'ada' }));
      const call = async (method: 'PUT' | 'DELETE', url: string, payload?: object) => {
        const response = await t.app.http.inject({ method, url, headers: ada, payload });
        assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
      };
      await call('PUT', '/api/rooms/club', { visibility: 'public' });
      const bob = await openPage(browser, `${t.url}/`);
      const bobErrors = consoleErrors(bob);
      await join(bob, 'bob', 'club');
      await roomItem(bob, 'club').waitFor(WAIT);

      await call('PUT', '/api/rooms/club', { topic: 'Members only, soon' });
      await bob.getByText('Members only, soon', { exact: true }).waitFor(WAIT);

      await call('DELETE', '/api/rooms/club/members/bob');
      await roomItem(bob, 'club').waitFor({ state: 'detached', ...WAIT });
      await bob.getByRole('alert').filter({ hasText: 'ada removed you from club.' }).waitFor(WAIT);
      assert.equal(await bob.locator('#room-view').isVisible(), false);
      assert.deepEqual(bobErrors, []);
    });
  });

  describe('with auth off', () => {
    let t: TestApp;
    before(async () => {
      if (skip) return;
      t = await startTestApp(sqliteEngine, { eventsHeartbeatMs: 1000 });
      await t.listen();
    });
    after(async () => {
      await t?.close();
    });

    it('creates, joins and leaves rooms with no failed request', { skip }, async () => {
      const carol = await openPage(browser, `${t.url}/`);
      // The page knows auth is off (/page-settings.js): it asks for no token, and nothing fails.
      const errors = consoleErrors(carol);
      await join(carol, 'carol', 'general');
      await roomItem(carol, 'general').waitFor(WAIT);
      await join(carol, 'carol', 'brand-new');
      await roomItem(carol, 'brand-new').waitFor(WAIT);
      await createRoom(carol, 'quiet', 'private');
      await post(carol, 'hello, nobody');
      await carol.getByRole('button', { name: 'Leave room' }).click();
      await roomItem(carol, 'quiet').waitFor({ state: 'detached', ...WAIT });
      await roomItem(carol, 'general').getByRole('button').click();
      await carol.getByRole('status').filter({ hasText: 'Live in general' }).waitFor(WAIT);
      assert.deepEqual((await carol.locator('#rooms .room-name').allTextContents()).sort(), [
        'brand-new',
        'general',
      ]);
      assert.deepEqual(errors, []);
    });
  });
});

interface Marker {
  lastRead: string | null;
  unread: number;
}

/** Bob's marker as the service has it, once `done` holds (the page sends it as it shows the room). */
async function waitForMarker(
  t: TestApp,
  room: string,
  subject: string,
  done: (marker: Marker) => boolean,
): Promise<Marker> {
  const headers = bearer(await token({ sub: subject }));
  let marker: Marker | undefined;
  for (let attempt = 0; attempt < 300; attempt++) {
    const response = await t.app.http.inject({
      method: 'GET',
      url: `/api/rooms/${room}/read-markers/${subject}`,
      headers,
    });
    assert.equal(response.statusCode, 200);
    marker = response.json() as Marker;
    if (done(marker)) return marker;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`the marker never got there: ${JSON.stringify(marker)}`);
}
