/**
 * Who may do what with reactions when auth is on, on every engine: a
 * reaction is made by its own subject (admins too), removed by it or an
 * admin; a message in a private room the caller cannot read is a 404 on every
 * reaction path and is left out of the batch; and the order of errors
 * (401, 400, 404 no message, 404 no reaction, 403, 409).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { MessageReactions } from '../../src/domain/reaction.ts';
import { AUTH } from '../auth/tokens.ts';
import { assertProblem, eachEngine, uniqueRoom, type ContractApp } from '../http/http-contract.ts';
import { callerFor, memberPath } from '../rooms/rooms-support.ts';
import {
  batchPath,
  emojiPath,
  privateScene,
  react,
  reactionPath,
  reactionsPath,
  summary,
} from './reactions-support.ts';

/** How many times each store operation ran so far, from /metrics. */
async function scrapeOperations(
  app: ContractApp,
  auth: Record<string, string>,
): Promise<Map<string, number>> {
  const response = await app.t.app.http.inject({ url: '/metrics', headers: auth });
  assert.equal(response.statusCode, 200);
  const counts = new Map<string, number>();
  for (const [, operation, n] of response.body.matchAll(
    /^store_operation_duration_seconds_count\{operation="([^"]+)"[^}]*\} (\d+)$/gm,
  )) {
    counts.set(operation!, Number(n));
  }
  return counts;
}

eachEngine(
  'reaction access (auth on)',
  (_engine, shared) => {
    const as = (sub: string, admin = false) => callerFor(shared(), true, sub, admin);

    it('without a token every reaction path is a 401', async () => {
      const ada = await as('ada');
      const message = await ada.post(uniqueRoom());
      const inject = shared().inject;
      for (const [method, url] of [
        ['PUT', reactionPath(message.id, '👍', 'ada')],
        ['DELETE', reactionPath(message.id, '👍', 'ada')],
        ['GET', reactionsPath(message.id)],
        ['GET', emojiPath(message.id, '👍')],
        ['GET', batchPath([message.id])],
        // 401 comes before the 400 of a bad emoji.
        ['PUT', reactionPath(message.id, 'a b', 'ada')],
      ] as const) {
        assertProblem(await inject({ method, url }), 401, 'unauthorized');
      }
    });

    it('a reaction is made by its own subject only, admins included (403)', async () => {
      const ada = await as('ada');
      const root = await as('root', true);
      const message = await ada.post(uniqueRoom());
      assertProblem(await ada.put(reactionPath(message.id, '👍', 'bob')), 403, 'forbidden');
      assertProblem(await root.put(reactionPath(message.id, '👍', 'ada')), 403, 'forbidden');
      assert.deepEqual(await summary(ada, message.id), []);
      await react(root, message.id, '👍');
    });

    it('removed by its own subject or an admin; a reaction that is not there is a 404 first', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const root = await as('root', true);
      const message = await ada.post(uniqueRoom());
      const reaction = await react(bob, message.id, '👍');
      await react(bob, message.id, '🎉');
      assertProblem(await ada.delete(reactionPath(message.id, '👍', 'bob')), 403, 'forbidden');
      assertProblem(await ada.delete(reactionPath(message.id, '❤️', 'bob')), 404, 'not-found');
      const removed = await root.delete(reactionPath(message.id, '👍', 'bob'));
      assert.equal(removed.statusCode, 200, removed.body);
      assert.deepEqual(removed.json(), reaction);
      const own = await bob.delete(reactionPath(message.id, '🎉', 'bob'));
      assert.equal(own.statusCode, 200, own.body);
    });

    it('`me` is the caller’s own, in the summary and in the batch', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const message = await ada.post(uniqueRoom());
      await react(ada, message.id, '👍');
      await react(bob, message.id, '🎉');
      assert.deepEqual(await summary(ada, message.id), [
        { emoji: '👍', count: 1, me: true },
        { emoji: '🎉', count: 1, me: false },
      ]);
      assert.deepEqual(await bob.read(batchPath([message.id])), [
        {
          messageId: message.id,
          reactions: [
            { emoji: '👍', count: 1, me: false },
            { emoji: '🎉', count: 1, me: true },
          ],
        },
      ]);
    });

    it('a private room’s message is a 404 on every reaction path for a non-member, and left out of the batch', async () => {
      const { ada, bob, carol, root, hidden, secret, open } = await privateScene(as);
      await react(ada, secret.id, '👍');
      await react(carol, secret.id, '🎉');
      await react(ada, open.id, '👍');
      for (const [method, url] of [
        ['PUT', reactionPath(secret.id, '👍', 'bob')],
        ['PUT', reactionPath(secret.id, '👍', 'ada')], // 404 before the 403 of another subject
        ['DELETE', reactionPath(secret.id, '👍', 'bob')],
        ['DELETE', reactionPath(secret.id, '👍', 'ada')],
        ['GET', reactionsPath(secret.id)],
        ['GET', emojiPath(secret.id, '👍')],
        ['GET', `${emojiPath(secret.id, '👍')}?after=nobody`],
      ] as const) {
        assertProblem(await bob.request(method, url), 404, 'not-found');
      }
      // A bad emoji is a 400 before the 404.
      assertProblem(await bob.put(reactionPath(secret.id, 'a b', 'bob')), 400, 'validation');
      const batch = await bob.read<MessageReactions[]>(batchPath([secret.id, open.id]));
      assert.deepEqual(
        batch.map((m) => m.messageId),
        [open.id],
      );
      // Members and admins read it all.
      for (const reader of [carol, root, ada]) {
        assert.equal((await summary(reader, secret.id)).length, 2);
        const both = await reader.read<MessageReactions[]>(batchPath([secret.id, open.id]));
        assert.deepEqual(
          both.map((m) => m.messageId),
          [secret.id, open.id],
        );
      }
      await react(root, secret.id, '👍');
      // A removed member loses access at once.
      assert.equal((await ada.delete(memberPath(hidden, 'carol'))).statusCode, 200);
      assertProblem(await carol.get(reactionsPath(secret.id)), 404, 'not-found');
      assertProblem(await carol.delete(reactionPath(secret.id, '🎉', 'carol')), 404, 'not-found');
      assert.deepEqual(await carol.read(batchPath([secret.id])), []);
    });

    it('GET /api/reactions is one store operation for the whole batch, access included', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const hidden = uniqueRoom();
      await ada.putRoom(hidden, { visibility: 'private' });
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) {
        const message = await ada.post(i % 5 === 0 ? hidden : uniqueRoom(), `m${i}`);
        if (i % 3 === 0) await react(ada, message.id, '👍');
        ids.push(message.id);
      }
      const storeOperations = () => scrapeOperations(shared(), ada.auth);
      const before = await storeOperations();
      const batch = await bob.read<MessageReactions[]>(batchPath(ids));
      const after = await storeOperations();
      assert.equal(batch.length, 40, 'the private room’s ten left out');
      // The change feed reads the log on its own time: its reads are not the request's.
      const delta = [...after]
        .filter(([operation]) => !operation.startsWith('changes.'))
        .map(([operation, n]) => [operation, n - (before.get(operation) ?? 0)] as const)
        .filter(([, n]) => n > 0);
      assert.deepEqual(delta, [['reactions.summaries', 1]]);
    });

    it('precedence at the cap: 403 (another subject) before 409 (a 21st emoji)', async () => {
      const ada = await as('ada');
      const message = await ada.post(uniqueRoom());
      for (let i = 0; i < 20; i++) await react(ada, message.id, `:e${i}:`);
      assertProblem(await ada.put(reactionPath(message.id, ':new:', 'bob')), 403, 'forbidden');
      assertProblem(await ada.put(reactionPath(message.id, ':new:', 'ada')), 409, 'too-many-emoji');
    });
  },
  AUTH,
);
