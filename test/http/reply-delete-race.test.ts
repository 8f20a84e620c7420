/**
 * A reply created while its parent is deleted, through the HTTP API on every
 * engine: the reply is either created before the delete (its
 * `message.created` comes before the parent's `message.deleted` in the change
 * log) or refused as the 400 of a replyTo that is not a stored message. Never
 * a 500, never a reply stored after its parent is gone.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Change } from '../../src/domain/change.ts';
import type { Message } from '../../src/domain/message.ts';
import { assertProblem, eachEngine, onlyError, uniqueRoom } from './http-contract.ts';

const ROUNDS = 200;

/** `kind id` → seq, for the message changes of the log. */
function messageSeqs(log: readonly Change[]): Map<string, number> {
  const seqs = new Map<string, number>();
  for (const change of log) {
    if (!change.kind.startsWith('message.')) continue;
    seqs.set(`${change.kind} ${(JSON.parse(change.data) as Message).id}`, change.seq);
  }
  return seqs;
}

/** `fn` after `turns` turns of the event loop. */
async function later<T>(turns: number, fn: () => Promise<T>): Promise<T> {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
  return fn();
}

eachEngine('a reply created while its parent is deleted', (engine, shared) => {
  it('is created before the delete or refused as a missing parent, in every round', async (t) => {
    const app = shared();
    const room = uniqueRoom();
    const created: { parent: string; reply: string }[] = [];
    const refused: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const parent = await app.create({ room, content: `parent ${round}` });
      const reply = () =>
        app.inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'bob', content: `reply ${round}`, room, replyTo: parent.id },
        });
      const remove = () => app.inject({ method: 'DELETE', url: `/api/messages/${parent.id}` });
      // The reply is sent first, and the delete after 0 to 7 turns of the event loop: the reply
      // is a longer way to the store than the delete, so at 0 the delete nearly always wins.
      const turns = round % 8;
      const [posted, deleted] = await Promise.all([reply(), later(turns, remove)]);
      assert.equal(deleted.statusCode, 200, `round ${round}: ${deleted.body}`);
      if (posted.statusCode === 201) {
        created.push({ parent: parent.id, reply: posted.json<Message>().id });
      } else {
        const problem = assertProblem(posted, 400, 'validation');
        assert.equal(onlyError(problem).pointer, '#/replyTo');
        refused.push(parent.id);
      }
    }
    t.diagnostic(`${engine.name}: ${created.length} created, ${refused.length} refused`);

    const log = await app.t.app.store.changes.since(0, 100_000);
    const seqs = messageSeqs(log);
    for (const { parent, reply } of created) {
      const replySeq = seqs.get(`message.created ${reply}`);
      const deleteSeq = seqs.get(`message.deleted ${parent}`);
      assert.ok(replySeq !== undefined && deleteSeq !== undefined, `${reply} and ${parent}`);
      assert.ok(
        replySeq < deleteSeq,
        `reply ${reply} (${replySeq}) after its parent's delete (${deleteSeq})`,
      );
    }
    // A refused reply stored nothing: every reply of the room in the log is one that was created.
    const replies = log
      .filter((c) => c.kind === 'message.created' && c.room === room)
      .map((c) => JSON.parse(c.data) as Message)
      .filter((m) => m.replyTo !== null);
    assert.deepEqual(
      replies.map((m) => [m.replyTo, m.id]),
      created.map((c) => [c.parent, c.reply]),
    );
    // Both outcomes come up in every run: on SQLite the turns decide which write is queued
    // first, on PostgreSQL the two transactions race (measured: 114 to 133 of 200 created).
    assert.ok(created.length > 0 && refused.length > 0);
    // What is left of the room is the created replies, which outlive their parents.
    const left = await app.inject({ url: `/api/messages?room=${room}&limit=${ROUNDS}` });
    assert.deepEqual(
      left.json<Message[]>().map((m) => m.id),
      created.map((c) => c.reply),
    );
    const { parent, reply } = created[0]!;
    const thread = await app.inject({ url: `/api/messages?replyTo=${parent}` });
    assert.deepEqual(
      thread.json<Message[]>().map((m) => m.id),
      [reply],
    );
  });
});
