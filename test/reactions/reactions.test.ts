/**
 * /api/messages/{id}/reactions... and /api/reactions through HTTP on every
 * engine, with auth on and off: add (201), again (200, nothing changes), the
 * optional `{}` body, remove, the emoji rule (multi-code-point emoji kept
 * exactly as sent, names, invalid percent-encoding), the cap of 20 different
 * emoji, the summary's order after removals and `me`, reactor paging with
 * Link, the batch of summaries, gone with the message, and a message that
 * reactions never change.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import type { MessageReactions, Reaction } from '../../src/domain/reaction.ts';
import { AUTH } from '../auth/tokens.ts';
import { assertProblem, eachEngine, onlyError, uniqueRoom } from '../http/http-contract.ts';
import { callerFor, walkPages, type Caller } from '../rooms/rooms-support.ts';
import {
  batchPath,
  emojiPath,
  react,
  reactionPath,
  rawRequest,
  reactionsPath,
  summary,
} from './reactions-support.ts';

const MISSING = '01890a5d-ac96-774b-bcce-b302099a8057';
const UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Emoji of several code points, and names: each kept exactly as sent. */
const EMOJI = [
  '👍',
  '👨‍👩‍👧', // a ZWJ family: five code points
  '👍🏽', // a skin tone
  '🇫🇷', // a flag: two regional indicators
  '1️⃣', // a keycap: digit, VS16, U+20E3
  ':party:',
  'e\u0301', // not normalized to é
  'é',
];

for (const auth of [false, true]) {
  eachEngine(
    `reactions (auth ${auth ? 'on' : 'off'})`,
    (_engine, shared) => {
      const as = (sub: string, admin = false) => callerFor(shared(), auth, sub, admin);
      const post = async (caller: Caller, room = uniqueRoom()): Promise<Message> =>
        caller.post(room, 'react to me');

      it('PUT without a body adds it (201), again is a 200 with the stored reaction', async () => {
        const ada = await as('ada');
        const message = await post(ada);
        const first = await ada.put(reactionPath(message.id, '👍', 'ada'));
        assert.equal(first.statusCode, 201, first.body);
        const reaction = first.json<Reaction>();
        assert.deepEqual(Object.keys(reaction), [
          'messageId',
          'room',
          'emoji',
          'subject',
          'createdAt',
        ]);
        assert.equal(reaction.messageId, message.id);
        assert.equal(reaction.room, message.room);
        assert.equal(reaction.emoji, '👍');
        assert.equal(reaction.subject, 'ada');
        assert.match(reaction.createdAt, UTC_MS);
        const again = await ada.put(reactionPath(message.id.toUpperCase(), '👍', 'ada'));
        assert.equal(again.statusCode, 200, again.body);
        assert.deepEqual(again.json(), reaction, 'the stored reaction, unchanged');
        assert.deepEqual(await summary(ada, message.id), [{ emoji: '👍', count: 1, me: auth }]);
      });

      it('a body, if sent, is JSON {}: a field is a 400 naming it, another media type a 415', async () => {
        const ada = await as('ada');
        const message = await post(ada);
        const path = reactionPath(message.id, '🎉', 'ada');
        const withField = await ada.put(path, { emoji: '🎉' });
        assert.equal(onlyError(assertProblem(withField, 400, 'validation')).pointer, '#/emoji');
        const text = await ada.put(path, 'hello', { 'content-type': 'text/plain' });
        assertProblem(text, 415, 'unsupported-media-type');
        const malformed = await ada.put(path, '{', { 'content-type': 'application/json' });
        assertProblem(malformed, 400);
        assert.deepEqual(await summary(ada, message.id), [], 'nothing stored by a refused PUT');
        const empty = await ada.put(path, {});
        assert.equal(empty.statusCode, 201, empty.body);
        const emptyAgain = await ada.put(path, {});
        assert.equal(emptyAgain.statusCode, 200, emptyAgain.body);
      });

      it('precedence: 413, then 415, then 400 (a bad emoji), then 404 (no message)', async () => {
        const ada = await as('ada');
        const message = await post(ada);
        const big = await ada.put(reactionPath(message.id, '👍', 'ada'), 'x'.repeat(70_000), {
          'content-type': 'text/plain',
        });
        assertProblem(big, 413);
        const text = await ada.put(reactionPath(MISSING, 'a b', 'ada'), 'x', {
          'content-type': 'text/plain',
        });
        assertProblem(text, 415);
        const badEmoji = await ada.put(reactionPath(MISSING, 'a b', 'ada'));
        assertProblem(badEmoji, 400, 'validation');
        const noMessage = await ada.put(reactionPath(MISSING, '👍', 'ada'));
        assertProblem(noMessage, 404, 'not-found');
      });

      it('emoji of many code points and names are kept exactly as sent, on every path', async () => {
        const ada = await as('ada');
        const message = await post(ada);
        for (const emoji of EMOJI) {
          const reaction = await react(ada, message.id, emoji);
          assert.equal(reaction.emoji, emoji);
          const reactors = await ada.read<Reaction[]>(emojiPath(message.id, emoji));
          assert.deepEqual(reactors, [reaction], `the reactors of ${emoji}`);
        }
        assert.deepEqual(
          (await summary(ada, message.id)).map((s) => s.emoji),
          EMOJI,
          'each one apart, in the order made (é and e + U+0301 are two emoji)',
        );
        const removed = await ada.delete(reactionPath(message.id, '👨‍👩‍👧', 'ada'));
        assert.equal(removed.statusCode, 200, removed.body);
        assert.equal(removed.json<Reaction>().emoji, '👨‍👩‍👧');
      });

      it('the emoji rule: 1-32 code points, no White_Space or control characters, not . or ..', async () => {
        const ada = await as('ada');
        const message = await post(ada);
        const thirtyTwo = '😀'.repeat(32);
        await react(ada, message.id, thirtyTwo);
        const encoded = ['😀'.repeat(33), 'a b', '\t', 'a\u0085', '\u00a0', 'x\u0000'].map((e) =>
          encodeURIComponent(e),
        );
        for (const bad of encoded) {
          const response = await ada.put(`${reactionsPath(message.id)}/${bad}/ada`);
          const problem = assertProblem(response, 400, 'validation');
          assert.equal(onlyError(problem).pointer, '#/emoji', bad);
        }
        // `.` and `..` as they can only come: percent-encoded, sent verbatim.
        for (const dots of ['%2E', '%2E%2E', '%2e%2e']) {
          for (const [method, path] of [
            ['PUT', `${reactionsPath(message.id)}/${dots}/ada`],
            ['DELETE', `${reactionsPath(message.id)}/${dots}/ada`],
            ['GET', `${reactionsPath(message.id)}/${dots}`],
            ['PUT', `${reactionsPath(message.id)}/ok/${dots}`],
          ] as const) {
            const response = await rawRequest(ada, method, path);
            assert.equal(response.statusCode, 400, `${method} ${path}: ${response.body}`);
            assert.equal(JSON.parse(response.body).type, '/problems/validation');
          }
        }
      });

      it('an invalid percent-encoding or UTF-8, or a very long emoji or subject, is a 400, never a 500', async () => {
        const ada = await as('ada');
        const message = await post(ada);
        for (const [emoji, subject] of [
          ['%ED%A0%80', 'ada'], // a lone surrogate
          ['%ZZ', 'ada'],
          ['%E0%A4%A', 'ada'],
          ['%FF', 'ada'],
          ['ok', '%ED%A0%80'],
          // Longer than the router takes: still the emoji's (or subject's) rule.
          ['a'.repeat(200), 'ada'],
          [encodeURIComponent('😀'.repeat(70)), 'ada'],
          ['ok', 'b'.repeat(200)],
        ] as const) {
          for (const method of ['PUT', 'DELETE'] as const) {
            const url = `${reactionsPath(message.id)}/${emoji}/${subject}`;
            const response = await ada.request(method, url);
            assertProblem(response, 400, 'validation');
          }
        }
        assertProblem(await ada.get(`${reactionsPath(message.id)}/%ED%A0%80`), 400, 'validation');
      });

      it('a message id of any shape that is not stored is a 404 on every path', async () => {
        const ada = await as('ada');
        for (const id of [MISSING, 'not-an-id', MISSING.toUpperCase()]) {
          assertProblem(await ada.put(reactionPath(id, '👍', 'ada')), 404, 'not-found');
          assertProblem(await ada.delete(reactionPath(id, '👍', 'ada')), 404, 'not-found');
          assertProblem(await ada.get(reactionsPath(id)), 404, 'not-found');
          assertProblem(await ada.get(emojiPath(id, '👍')), 404, 'not-found');
        }
      });

      it('DELETE answers the reaction as it was; then it is a 404', async () => {
        const ada = await as('ada');
        const message = await post(ada);
        const reaction = await react(ada, message.id, '🎉');
        const removed = await ada.delete(reactionPath(message.id, '🎉', 'ada'));
        assert.equal(removed.statusCode, 200, removed.body);
        assert.deepEqual(removed.json(), reaction);
        assertProblem(await ada.delete(reactionPath(message.id, '🎉', 'ada')), 404, 'not-found');
        assert.deepEqual(await summary(ada, message.id), []);
        assert.deepEqual(await ada.read(emojiPath(message.id, '🎉')), []);
      });

      it('at most 20 different emoji: the 21st is a 409, one of the 20 by another subject is fine', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const message = await post(ada);
        const twenty = Array.from({ length: 20 }, (_, i) => `:e${i}:`);
        for (const emoji of twenty) await react(ada, message.id, emoji);
        const more = await ada.put(reactionPath(message.id, ':e20:', 'ada'));
        assertProblem(more, 409, 'too-many-emoji');
        assertProblem(await bob.put(reactionPath(message.id, '👍', 'bob')), 409, 'too-many-emoji');
        await react(bob, message.id, ':e7:');
        await react(ada, message.id, ':e7:', 200);
        const counts = await summary(ada, message.id);
        assert.equal(counts.length, 20);
        assert.deepEqual(counts[7], { emoji: ':e7:', count: 2, me: auth && true });
        // An emoji gone from the message frees its place.
        const gone = await ada.delete(reactionPath(message.id, ':e3:', 'ada'));
        assert.equal(gone.statusCode, 200);
        await react(bob, message.id, ':e20:');
        assert.equal((await summary(ada, message.id)).length, 20);
      });

      it('PUTs at once: of five new emoji at 19 exactly one gets in; one reaction is added once', async () => {
        const ada = await as('ada');
        const others = await Promise.all(['b1', 'b2', 'b3', 'b4', 'b5'].map((s) => as(s)));
        const message = await post(ada);
        for (let i = 0; i < 19; i++) await react(ada, message.id, `:e${i}:`);
        const answers = await Promise.all(
          others.map((caller, i) => caller.put(reactionPath(message.id, `:new${i}:`, caller.sub))),
        );
        const statuses = answers.map((r) => r.statusCode).sort();
        assert.deepEqual(
          statuses,
          [201, 409, 409, 409, 409],
          answers.map((r) => r.body).join('\n'),
        );
        assert.equal((await summary(ada, message.id)).length, 20);
        // The same reaction at once: one adds it, the others find it.
        const own = await Promise.all(
          [0, 1, 2].map(() => others[0]!.put(reactionPath(message.id, ':e1:', 'b1'))),
        );
        assert.deepEqual(own.map((r) => r.statusCode).sort(), [200, 200, 201]);
        assert.equal(new Set(own.map((r) => r.body)).size, 1, 'the same reaction, as stored');
      });

      it('the summary is ordered by each emoji’s earliest current reaction, also after removals', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const carol = await as('carol');
        const message = await post(ada);
        await react(ada, message.id, '👍');
        await react(bob, message.id, '🎉');
        await react(carol, message.id, '👍');
        await react(carol, message.id, '❤️');
        const me = (sub: string) => auth && sub === 'carol';
        assert.deepEqual(await summary(carol, message.id), [
          { emoji: '👍', count: 2, me: me('carol') },
          { emoji: '🎉', count: 1, me: false },
          { emoji: '❤️', count: 1, me: me('carol') },
        ]);
        // 👍's earliest current reaction is now carol's, made after bob's 🎉.
        assert.equal((await ada.delete(reactionPath(message.id, '👍', 'ada'))).statusCode, 200);
        assert.deepEqual(await summary(bob, message.id), [
          { emoji: '🎉', count: 1, me: auth },
          { emoji: '👍', count: 1, me: false },
          { emoji: '❤️', count: 1, me: false },
        ]);
        // Made again: it goes last.
        await react(ada, message.id, '👍', 201);
        await react(bob, message.id, '🎉', 200);
        assert.deepEqual(
          (await summary(ada, message.id)).map((s) => [s.emoji, s.count]),
          [
            ['🎉', 1],
            ['👍', 2],
            ['❤️', 1],
          ],
        );
      });

      it('the reactors of an emoji, in the order made: limit, after=<subject>, Link rel="next"', async () => {
        const subjects = ['zed', 'Bob', 'amy', 'dan 2', 'ève'];
        const callers = await Promise.all(subjects.map((s) => as(s)));
        const message = await post(callers[0]!);
        const made: Reaction[] = [];
        for (const caller of callers) made.push(await react(caller, message.id, '👍🏽'));
        await react(callers[1]!, message.id, '🎉');
        const all = await callers[0]!.get(emojiPath(message.id, '👍🏽'));
        assert.equal(all.statusCode, 200);
        assert.equal(all.headers.link, undefined, 'the default limit holds them all');
        assert.deepEqual(all.json(), made);
        const paged = await walkPages<Reaction>(
          callers[0]!,
          `${emojiPath(message.id, '👍🏽')}?limit=2`,
        );
        assert.deepEqual(paged.items, made);
        assert.equal(paged.pages, 3);
        const after = await callers[0]!.read<Reaction[]>(
          `${emojiPath(message.id, '👍🏽')}?after=${encodeURIComponent('amy')}&limit=10`,
        );
        assert.deepEqual(after, made.slice(3));
        // A subject that has no such reaction: its place is unknown, a 400 naming after.
        for (const subject of ['nobody', 'Bob']) {
          const emoji = subject === 'Bob' ? '❤️' : '👍🏽';
          const response = await callers[0]!.get(
            `${emojiPath(message.id, emoji)}?after=${subject}`,
          );
          assert.equal(onlyError(assertProblem(response, 400, 'validation')).parameter, 'after');
        }
        for (const bad of ['limit=0', 'limit=1001', 'limit=x']) {
          const response = await callers[0]!.get(`${emojiPath(message.id, '👍🏽')}?${bad}`);
          assert.equal(onlyError(assertProblem(response, 400)).parameter, 'limit');
        }
        assert.deepEqual(await callers[0]!.read(emojiPath(message.id, '🙂')), [], 'nobody');
      });

      it('GET /api/reactions: summaries in the order asked, repeats once, unknown ones left out', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const room = uniqueRoom();
        const m1 = await post(ada, room);
        const m2 = await post(ada, room);
        const m3 = await post(ada, room);
        await react(ada, m1.id, '👍');
        await react(bob, m1.id, '👍');
        await react(bob, m1.id, '🎉');
        await react(bob, m3.id, '❤️');
        const asked = [m3.id, MISSING, m1.id.toUpperCase(), m2.id, m3.id, m1.id];
        const response = await ada.get(batchPath(asked));
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(response.json<MessageReactions[]>(), [
          { messageId: m3.id, reactions: [{ emoji: '❤️', count: 1, me: false }] },
          {
            messageId: m1.id,
            reactions: [
              { emoji: '👍', count: 2, me: auth },
              { emoji: '🎉', count: 1, me: false },
            ],
          },
          { messageId: m2.id, reactions: [] },
        ]);
        // The engines write the text themselves: byte for byte what JSON.stringify writes, and
        // each message's part what its own summary answers (multi-code-point emoji, names).
        await react(bob, m2.id, '👩‍👩‍👧‍👦');
        await react(ada, m2.id, ':party-"time"\\:');
        await react(bob, m2.id, '🇺🇦');
        const text = (await ada.get(batchPath([m1.id, m2.id, m3.id]))).body;
        const parsed = JSON.parse(text) as MessageReactions[];
        assert.equal(text, JSON.stringify(parsed));
        for (const { messageId, reactions } of parsed) {
          const own = await ada.get(reactionsPath(messageId));
          assert.equal(JSON.stringify(reactions), own.body, messageId);
        }
        assert.deepEqual(
          parsed[1]!.reactions.map((r) => [r.emoji, r.me]),
          [
            ['👩‍👩‍👧‍👦', false],
            [':party-"time"\\:', auth],
            ['🇺🇦', false],
          ],
        );
        assert.deepEqual(await ada.read(batchPath([MISSING])), []);
        const hundred = Array.from({ length: 100 }, () => m2.id);
        assert.equal((await ada.read<unknown[]>(batchPath(hundred))).length, 1);
        for (const url of [
          '/api/reactions',
          batchPath([...hundred, m1.id]),
          batchPath([m1.id, 'not-an-id']),
          '/api/reactions?messageId=',
        ]) {
          const problem = assertProblem(await ada.get(url), 400, 'validation');
          assert.ok(
            problem.errors?.every((e) => e.parameter === 'messageId'),
            `${url}: ${JSON.stringify(problem.errors)}`,
          );
        }
      });

      it('reactions never change the message: version, updatedAt and ETag stay', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const message = await post(ada);
        const before = await ada.get(`/api/messages/${message.id}`);
        await react(bob, message.id, '👍');
        await react(ada, message.id, '🎉');
        assert.equal((await bob.delete(reactionPath(message.id, '👍', 'bob'))).statusCode, 200);
        const after = await ada.get(`/api/messages/${message.id}`);
        assert.equal(after.headers.etag, before.headers.etag);
        assert.deepEqual(after.json(), message);
        const notModified = await ada.get(`/api/messages/${message.id}`, {
          'if-none-match': String(before.headers.etag),
        });
        assert.equal(notModified.statusCode, 304);
      });

      it('gone with the message: every path is a 404 after its DELETE, and nothing comes back', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const room = uniqueRoom();
        const message = await post(ada, room);
        const other = await post(ada, room);
        await react(ada, message.id, '👍');
        await react(bob, message.id, '🎉');
        await react(bob, other.id, '🎉');
        const deleted = await ada.delete(`/api/messages/${message.id}`);
        assert.equal(deleted.statusCode, 200, deleted.body);
        assertProblem(await ada.get(reactionsPath(message.id)), 404);
        assertProblem(await ada.get(emojiPath(message.id, '👍')), 404);
        assertProblem(await ada.delete(reactionPath(message.id, '👍', 'ada')), 404);
        assertProblem(await bob.put(reactionPath(message.id, '🎉', 'bob')), 404);
        assert.deepEqual(await ada.read(batchPath([message.id, other.id])), [
          { messageId: other.id, reactions: [{ emoji: '🎉', count: 1, me: false }] },
        ]);
        // The store keeps none of them: the change log holds no reaction.removed for them either.
        const log = await shared().t.app.store.changes.since(0, 100_000);
        const about = log.filter(
          (c) => c.kind.startsWith('reaction.') && c.data.includes(message.id),
        );
        assert.deepEqual(
          about.map((c) => c.kind),
          ['reaction.added', 'reaction.added'],
        );
      });
    },
    auth ? AUTH : {},
  );
}
