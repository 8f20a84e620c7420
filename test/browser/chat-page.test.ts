/**
 * The chat page in a real browser (Debian's Chromium, headless, driven by
 * playwright-core): two people in one room see each other's messages, edits
 * and deletes live; older messages load on demand; and the live stream comes
 * back by itself after the server goes away and returns. A screenshot is
 * saved under test-output/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { joinRoom, messageItem, pageSuite, WAIT } from '../support/browser.ts';
import { CHROMIUM, chromiumAvailable, skipUnless } from '../support/prerequisites.ts';
import { createMessage } from '../events/event-helpers.ts';

const ROOM = 'lobby';

describe('chat page', () => {
  const skip = skipUnless(chromiumAvailable(), `Chromium at ${CHROMIUM}`);
  const suite = pageSuite(skip);

  async function join(name: string): Promise<Page> {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    page.on('pageerror', (error) => assert.fail(`page error: ${error.message}`));
    await page.goto(`${suite.t.url}/`);
    await joinRoom(page, ROOM, name);
    return page;
  }

  const message = messageItem;

  it('shows history, and each other’s messages, edits and deletes live', { skip }, async () => {
    for (let i = 0; i < 55; i++) {
      await createMessage(suite.t, { author: 'carol', room: ROOM, content: `history ${i}` });
    }
    const ada = await join('ada');
    const bob = await join('bob');

    // The latest page, then one older page on demand.
    await message(bob, 'history 54').waitFor(WAIT);
    assert.equal(await message(bob, 'history 4').count(), 0);
    await bob.getByRole('button', { name: 'Load older messages' }).click();
    await message(bob, 'history 4').waitFor(WAIT);
    assert.equal(await bob.locator('#messages li.message').count(), 55);
    await bob.getByRole('button', { name: 'Load older messages' }).waitFor({ state: 'hidden' });

    // Ada writes; Bob sees it.
    await ada.getByLabel('Message', { exact: true }).fill('Hello from Ada');
    await ada.getByRole('button', { name: 'Send' }).click();
    await message(bob, 'Hello from Ada').waitFor(WAIT);
    // Only the author gets edit and delete buttons (everyone may reply and react).
    const adas = message(bob, 'Hello from Ada');
    assert.equal(await adas.getByRole('button', { name: /^(Edit|Delete)$/ }).count(), 0);
    assert.equal(await adas.getByRole('button', { name: 'Reply' }).count(), 1);

    // Ada edits; Bob sees the new text, marked as edited.
    const own = message(ada, 'Hello from Ada');
    await own.getByRole('button', { name: 'Edit' }).click();
    await own.getByLabel('Edit message').fill('Hello again from Ada');
    await own.getByRole('button', { name: 'Save' }).click();
    const edited = message(bob, 'Hello again from Ada');
    await edited.waitFor(WAIT);
    await edited.getByText('(edited)').waitFor(WAIT);

    // Bob answers; Ada sees it.
    await bob.getByLabel('Message', { exact: true }).fill('Hi Ada, Bob here');
    await bob.getByLabel('Message', { exact: true }).press('Enter');
    await message(ada, 'Hi Ada, Bob here').waitFor(WAIT);

    mkdirSync('test-output', { recursive: true });
    await bob.screenshot({ path: 'test-output/chat-page.png', fullPage: true });

    // Ada deletes; it disappears for Bob.
    await message(ada, 'Hello again from Ada').getByRole('button', { name: 'Delete' }).click();
    await message(bob, 'Hello again from Ada').waitFor({ state: 'detached', ...WAIT });
    assert.equal(await message(ada, 'Hello again from Ada').count(), 0);
  });

  it('comes back live after the server goes away and returns', { skip }, async () => {
    const bob = await join('bob');
    await suite.stop();
    await bob
      .getByRole('status')
      .filter({ hasText: /reconnecting|retrying/i })
      .waitFor(WAIT);
    // The same store, the same address: a restarted instance.
    await suite.restart(async (t) => {
      // Written while the page was disconnected: the page gets it by resuming from its last id.
      await createMessage(t, { author: 'carol', room: ROOM, content: 'written while away' });
    });
    await message(bob, 'written while away').waitFor(WAIT);
    await bob
      .getByRole('status')
      .filter({ hasText: `Live in ${ROOM}` })
      .waitFor(WAIT);
    await createMessage(suite.t, { author: 'carol', room: ROOM, content: 'and live again' });
    await message(bob, 'and live again').waitFor(WAIT);
    assert.equal(await message(bob, 'written while away').count(), 1);
  });
});
