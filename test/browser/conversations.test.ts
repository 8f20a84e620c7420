/**
 * Conversations on the chat page, in a real browser (Debian's Chromium,
 * headless, driven by playwright-core), auth off as the other chat page
 * tests, two people on two pages: a reply written on one page shows its
 * quote on the other; a click on a quote jumps to the message it answers
 * with one `around` read, also when that message is pages back; a deleted
 * parent is quoted as such; reactions load with one request per page of
 * messages, and are added and toggled off live on both pages; an edited
 * message opens its history. With auth on (development tokens) the service
 * says which reactions are yours, and who made each edit. No request fails
 * and the console stays clean.
 * Screenshots are saved under test-output/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { Message } from '../../src/domain/message.ts';
import {
  joinRoom,
  messageItem,
  pageSuite,
  startSignedInApp,
  WAIT,
  watchedPage,
  type Watched,
} from '../support/browser.ts';
import { CHROMIUM, chromiumAvailable, skipUnless } from '../support/prerequisites.ts';
import type { TestApp } from '../support/test-app.ts';
import { deleteMessage } from '../events/event-helpers.ts';
import { bearer, token } from '../auth/tokens.ts';

describe('conversations on the chat page', () => {
  const skip = skipUnless(chromiumAvailable(), `Chromium at ${CHROMIUM}`);
  const suite = pageSuite(skip);

  async function open(name: string, room: string, app = suite.t): Promise<Watched> {
    const watched = await watchedPage(suite.browser, `${app.url}/`, { decodeQuery: true });
    await joinRoom(watched.page, room, name);
    return watched;
  }

  const message = messageItem;

  /** The chip of `emoji` under a message. */
  const chip = (page: Page, text: string, emoji: string) =>
    message(page, text).locator(`.reactions .chip[data-emoji="${emoji}"]`);

  async function post(
    room: string,
    content: string,
    author = 'carol',
    replyTo?: string,
  ): Promise<Message> {
    const response = await suite.t.app.http.inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author, room, content, ...(replyTo === undefined ? {} : { replyTo }) },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json<Message>();
  }

  async function react(id: string, emoji: string, subject: string): Promise<void> {
    const response = await suite.t.app.http.inject({
      method: 'PUT',
      url: `/api/messages/${id}/reactions/${encodeURIComponent(emoji)}/${encodeURIComponent(subject)}`,
    });
    assert.equal(response.statusCode, 201, response.body);
  }

  const gets = (requests: string[], prefix: string) =>
    requests.filter((r) => r.startsWith(`GET ${prefix}`));

  it(
    'replies: the quote shows on the other page and jumps to its parent with around',
    { skip },
    async () => {
      const old = await post('conv', 'an old question');
      // More than a page between the old question and what the pages show.
      for (let i = 0; i < 120; i++) await post('conv', `filler ${i}`);
      await post('conv', 'the question');

      const ada = await open('ada', 'conv');
      const bob = await open('bob', 'conv');
      await message(bob.page, 'the question').waitFor(WAIT);
      assert.equal(await message(bob.page, 'an old question').count(), 0);

      // Ada replies from the message's actions: the composer says to whom, and can be cancelled.
      const question = message(ada.page, 'the question');
      await question.hover();
      await question.getByRole('button', { name: 'Reply', exact: true }).click();
      const replying = ada.page.locator('#replying');
      assert.equal(
        (await replying.locator('#replying-text').textContent())?.trim(),
        'Replying to carol: the question',
      );
      await replying.getByRole('button', { name: 'Cancel reply' }).click();
      await replying.waitFor({ state: 'hidden', ...WAIT });
      await question.hover();
      await question.getByRole('button', { name: 'Reply', exact: true }).click();
      await replying.waitFor(WAIT);
      const posted = ada.page.waitForRequest(
        (r) => r.method() === 'POST' && r.url().endsWith('/api/messages'),
      );
      await ada.page.getByLabel('Message', { exact: true }).fill('the answer');
      await ada.page.getByLabel('Message', { exact: true }).press('Enter');
      const questionId = (await question.getAttribute('data-id'))!;
      assert.equal(((await posted).postDataJSON() as { replyTo: string }).replyTo, questionId);
      await replying.waitFor({ state: 'hidden', ...WAIT });

      // Both pages quote the parent (author and first line).
      for (const { page } of [ada, bob]) {
        const quote = message(page, 'the answer').locator('.quote');
        await quote.getByText('the question').waitFor(WAIT);
        assert.equal(await quote.textContent(), 'carol: the question');
      }

      // A reply to a message far back: its quote is read by id (one list read with id=).
      const seen = bob.requests.length;
      await post('conv', 'answering the old one', 'carol', old.id);
      const quote = message(bob.page, 'answering the old one').locator('.quote');
      await quote.getByText('an old question').waitFor(WAIT);
      assert.equal(await quote.textContent(), 'carol: an old question');
      const byId = gets(bob.requests.slice(seen), '/api/messages?');
      assert.deepEqual(byId.length, 1, byId.join('\n'));
      assert.match(byId[0]!, new RegExp(`id=${old.id}`));
      await bob.page.screenshot({ path: 'test-output/chat-conversations.png' });

      // A click on the quote: one read of the page around the parent, which is shown and marked.
      const before = bob.requests.length;
      await quote.click();
      const found = bob.page.locator(`#messages li.message.found[data-id="${old.id}"]`);
      await found.waitFor(WAIT);
      assert.ok(await found.isVisible());
      const around = bob.requests.slice(before).filter((r) => r.includes('around='));
      assert.equal(around.length, 1, around.join('\n'));
      assert.match(around[0]!, new RegExp(`around=${old.id}`));
      assert.match(around[0]!, /room=conv/);
      await bob.page.screenshot({ path: 'test-output/chat-reply-jump.png' });

      // A parent deleted: its replies stay, quoting "a deleted message", live and when read afresh.
      const doomed = await post('conv', 'soon gone');
      await post('conv', 'still here', 'carol', doomed.id);
      const adaQuote = message(ada.page, 'still here').locator('.quote');
      await adaQuote.getByText('soon gone').waitFor(WAIT);
      await deleteMessage(suite.t, doomed.id);
      await adaQuote.getByText('a deleted message').waitFor(WAIT);
      assert.equal(await adaQuote.isDisabled(), true);
      const carol = await open('carol', 'conv');
      const carolQuote = message(carol.page, 'still here').locator('.quote');
      await carolQuote.getByText('a deleted message').waitFor(WAIT);

      assert.deepEqual(ada.problems, []);
      assert.deepEqual(bob.problems, []);
      assert.deepEqual(carol.problems, []);
    },
  );

  it(
    'reactions: one read per page, added and toggled off live on both pages',
    { skip },
    async () => {
      const first = await post('react', 'oldest of all');
      for (let i = 0; i < 58; i++) await post('react', `chatter ${i}`);
      await post('react', 'react to me');
      await react(first.id, '👍', 'carol');
      await react(first.id, '👍', 'dave');

      const ada = await open('ada', 'react');
      const bob = await open('bob', 'react');
      await message(bob.page, 'react to me').waitFor(WAIT);
      // One summary read for the latest page (50 messages), none per message.
      await bob.page.locator('#messages').evaluate((el) => (el.scrollTop = el.scrollHeight));
      const firstReads = gets(bob.requests, '/api/reactions?');
      assert.equal(firstReads.length, 1, firstReads.join('\n'));
      assert.equal(firstReads[0]!.match(/messageId=/g)?.length, 50);
      assert.equal(gets(bob.requests, '/api/messages/').length, 0);

      // The older page brings its own single read, with the counts of its messages.
      await bob.page.getByRole('button', { name: 'Load older messages' }).click();
      await chip(bob.page, 'oldest of all', '👍').waitFor({ state: 'attached', ...WAIT });
      assert.equal((await chip(bob.page, 'oldest of all', '👍').textContent())?.trim(), '👍 2');
      assert.equal(
        await chip(bob.page, 'oldest of all', '👍').getAttribute('aria-pressed'),
        'false',
      );
      const reads = gets(bob.requests, '/api/reactions?');
      assert.equal(reads.length, 2, reads.join('\n'));
      assert.equal(reads[1]!.match(/messageId=/g)?.length, 10);

      // Ada adds one from the picker (a skin tone); Bob sees it at once, not as his.
      const target = message(ada.page, 'react to me');
      await target.hover();
      await target.getByRole('button', { name: 'React', exact: true }).click();
      const picker = target.getByRole('group', { name: 'Pick a reaction' });
      await picker.getByRole('button', { name: 'React with 👍🏽' }).click();
      await picker.waitFor({ state: 'detached', ...WAIT });
      const adaChip = chip(ada.page, 'react to me', '👍🏽');
      await adaChip.waitFor(WAIT);
      assert.equal(await adaChip.getAttribute('aria-pressed'), 'true');
      const bobChip = chip(bob.page, 'react to me', '👍🏽');
      await bobChip.waitFor(WAIT);
      assert.equal((await bobChip.textContent())?.trim(), '👍🏽 1');
      assert.equal(await bobChip.getAttribute('aria-pressed'), 'false');

      // Bob adds his by the chip (a ZWJ one from the picker too, by keyboard); Ada sees the counts.
      await bobChip.click();
      await chip(ada.page, 'react to me', '👍🏽').getByText('2', { exact: true }).waitFor(WAIT);
      await bobChip.getByText('2', { exact: true }).waitFor(WAIT);
      assert.equal(await bobChip.getAttribute('aria-pressed'), 'true');
      const bobTarget = message(bob.page, 'react to me');
      await bobTarget.getByRole('button', { name: 'React', exact: true }).focus();
      await bob.page.keyboard.press('Enter');
      const bobPicker = bobTarget.getByRole('group', { name: 'Pick a reaction' });
      await bobPicker.getByRole('button', { name: 'React with 🧑‍💻' }).focus();
      await bob.page.keyboard.press('Enter');
      await chip(ada.page, 'react to me', '🧑‍💻').waitFor(WAIT);
      assert.equal((await chip(ada.page, 'react to me', '🧑‍💻').textContent())?.trim(), '🧑‍💻 1');
      await bob.page.screenshot({ path: 'test-output/chat-reactions.png' });

      // Toggled off: Ada's goes, the count drops on Bob's page; then Bob's, and the chip is gone.
      await adaChip.click();
      await bobChip.getByText('1', { exact: true }).waitFor(WAIT);
      assert.equal(await bobChip.getAttribute('aria-pressed'), 'true');
      await adaChip.getByText('1', { exact: true }).waitFor(WAIT);
      assert.equal(await adaChip.getAttribute('aria-pressed'), 'false');
      await bobChip.click();
      await adaChip.waitFor({ state: 'detached', ...WAIT });
      await bobChip.waitFor({ state: 'detached', ...WAIT });

      // A message that arrives live has none to read: its first reaction shows all the same.
      const fresh = await post('react', 'fresh one');
      await message(ada.page, 'fresh one').waitFor(WAIT);
      await react(fresh.id, '🎉', 'carol');
      for (const { page } of [ada, bob]) {
        await chip(page, 'fresh one', '🎉').getByText('1', { exact: true }).waitFor(WAIT);
      }

      // Still one summary read per page loaded on each page: the rest came live.
      assert.equal(gets(ada.requests, '/api/reactions?').length, 1);
      assert.equal(gets(bob.requests, '/api/reactions?').length, 2);
      assert.deepEqual(ada.problems, []);
      assert.deepEqual(bob.problems, []);
    },
  );

  it('an edited message opens its history: each version, who, when', { skip }, async () => {
    const { page, problems } = await open('ada', 'drafts');
    await page.getByLabel('Message', { exact: true }).fill('first draft');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const mine = message(page, 'first draft');
    await mine.waitFor(WAIT);
    assert.equal(await mine.locator('.edited').isVisible(), false);
    await mine.hover();
    await mine.getByRole('button', { name: 'Edit', exact: true }).click();
    await mine.getByLabel('Edit message').fill('second draft');
    await mine.getByRole('button', { name: 'Save' }).click();
    const edited = message(page, 'second draft');
    const mark = edited.getByRole('button', { name: '(edited)' });
    await mark.waitFor(WAIT);

    await mark.click();
    const dialog = page.getByRole('dialog', { name: 'Edit history' });
    await dialog.waitFor(WAIT);
    await dialog.getByText('2 versions, oldest first').waitFor(WAIT);
    const versions = dialog.locator('li.revision');
    assert.equal(await versions.count(), 2);
    assert.equal(await versions.nth(0).locator('.content').textContent(), 'first draft');
    assert.equal(await versions.nth(1).locator('.content').textContent(), 'second draft');
    assert.match(
      (await versions.nth(0).locator('.meta').textContent()) ?? '',
      /Version 1\s*by ada/,
    );
    // With auth off an edit is signed by nobody.
    assert.match(
      (await versions.nth(1).locator('.meta').textContent()) ?? '',
      /Version 2\s*by someone/,
    );
    assert.match(
      (await versions.nth(1).locator('time').getAttribute('datetime')) ?? '',
      /^\d{4}-\d\d-\d\dT/,
    );
    await page.screenshot({ path: 'test-output/chat-edit-history.png' });

    // Escape closes it, and the focus is back on the mark.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden', ...WAIT });
    assert.equal((await page.locator(':focus').textContent())?.trim(), '(edited)');
    assert.deepEqual(problems, []);
  });
  describe('with auth on', () => {
    let authed: TestApp;
    before(async () => {
      if (!skip) authed = await startSignedInApp();
    });
    after(async () => {
      await authed?.close();
    });

    async function as(sub: string, method: 'POST' | 'PUT', url: string, payload?: object) {
      const response = await authed.app.http.inject({
        method,
        url,
        headers: bearer(await token({ sub })),
        ...(payload === undefined ? {} : { payload }),
      });
      assert.ok(response.statusCode < 300, response.body);
      return response.json<Message>();
    }

    it('yours are pressed as the service says, and edits name their editor', { skip }, async () => {
      const hello = await as('carol', 'POST', '/api/messages', {
        room: 'general',
        content: 'hello, signed in',
      });
      await as('ada', 'PUT', `/api/messages/${hello.id}/reactions/${encodeURIComponent('🎉')}/ada`);

      const ada = await open('ada', 'general', authed);
      const bob = await open('bob', 'general', authed);
      // Read from the summary (`me`): Ada's is pressed on her page only.
      const adaChip = chip(ada.page, 'hello, signed in', '🎉');
      const bobChip = chip(bob.page, 'hello, signed in', '🎉');
      await adaChip.waitFor(WAIT);
      await bobChip.waitFor(WAIT);
      assert.equal(await adaChip.getAttribute('aria-pressed'), 'true');
      assert.equal(await bobChip.getAttribute('aria-pressed'), 'false');
      assert.equal(gets(ada.requests, '/api/reactions?').length, 1);

      // Ada takes hers away: a DELETE of her own, gone on both pages.
      const deleted = ada.page.waitForRequest((r) => r.method() === 'DELETE');
      await adaChip.click();
      assert.match(decodeURIComponent((await deleted).url()), /\/reactions\/🎉\/ada$/);
      await bobChip.waitFor({ state: 'detached', ...WAIT });
      await adaChip.waitFor({ state: 'detached', ...WAIT });

      // Bob replies and edits his reply: the history names him.
      const target = message(bob.page, 'hello, signed in');
      await target.hover();
      await target.getByRole('button', { name: 'Reply', exact: true }).click();
      await bob.page.getByLabel('Message', { exact: true }).fill('hi carol');
      await bob.page.getByLabel('Message', { exact: true }).press('Enter');
      const reply = message(ada.page, 'hi carol');
      await reply.locator('.quote').getByText('hello, signed in').waitFor(WAIT);
      const mine = message(bob.page, 'hi carol');
      await mine.hover();
      await mine.getByRole('button', { name: 'Edit', exact: true }).click();
      await mine.getByLabel('Edit message').fill('hi again, carol');
      await mine.getByRole('button', { name: 'Save' }).click();
      const edited = message(ada.page, 'hi again, carol');
      await edited.getByRole('button', { name: '(edited)' }).click();
      const dialog = ada.page.getByRole('dialog', { name: 'Edit history' });
      await dialog.getByText('2 versions, oldest first').waitFor(WAIT);
      const metas = await dialog.locator('li.revision .meta').allTextContents();
      assert.match(metas[0]!, /Version 1\s*by bob/);
      assert.match(metas[1]!, /Version 2\s*by bob/);
      assert.deepEqual(ada.problems, []);
      assert.deepEqual(bob.problems, []);
    });
  });
});
