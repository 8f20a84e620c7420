/**
 * A 2xx write survives kill -9 of the server (docs/concepts.md, "Durability"), and a
 * write that was not answered either fully happened or did not happen.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { postMessage, startServer, tempDir, within } from './server-process.ts';

const BOUND_MS = 60_000;

interface Message {
  id: string;
  room: string;
  author: string;
  content: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}

describe('durability on SQLite', () => {
  const dir = tempDir();

  it('every answered POST, PUT and DELETE survives kill -9; unanswered writes are whole or absent', async () => {
    const env = { PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'kill9.db')}` };
    const first = startServer({ env });
    const url = await within(first.listening, BOUND_MS, 'listening');

    // Answered writes of every kind.
    const kept: Message[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await postMessage(url, `kept ${i}`);
      assert.equal(response.status, 201);
      kept.push((await response.json()) as Message);
    }
    const put = await fetch(`${url}/api/messages/${kept[0]!.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'edited before the kill' }),
    });
    assert.equal(put.status, 200);
    kept[0] = (await put.json()) as Message;
    const deleted = await fetch(`${url}/api/messages/${kept[1]!.id}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    const gone = kept.splice(1, 1)[0]!;

    // A burst in flight when the process dies: kill -9 after the first answers arrive.
    const answered: Message[] = [];
    const burst = Array.from({ length: 60 }, (_, i) =>
      postMessage(url, `burst ${i}`).then(
        async (response) => {
          if (response.status === 201) answered.push((await response.json()) as Message);
        },
        () => undefined, // no answer: the connection died with the process
      ),
    );
    for (let waited = 0; answered.length < 5 && waited < 600; waited += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    first.child.kill('SIGKILL');
    await Promise.all(burst);
    const exit = await within(first.exited, BOUND_MS, 'killed');
    assert.equal(exit.signal, 'SIGKILL');
    assert.ok(answered.length >= 1, 'some of the burst was answered before the kill');

    const second = startServer({ env });
    const url2 = await within(second.listening, BOUND_MS, 'listening after the kill');
    try {
      const list = (await (await fetch(`${url2}/api/messages`)).json()) as Message[];
      const byId = new Map(list.map((m) => [m.id, m]));
      for (const message of [...kept, ...answered]) {
        assert.deepEqual(
          byId.get(message.id),
          message,
          `answered write ${message.content} survived`,
        );
      }
      assert.equal(byId.has(gone.id), false, 'the answered DELETE survived');
      assert.equal((await fetch(`${url2}/api/messages/${gone.id}`)).status, 404);
      // Whatever else is there is a whole message from the burst, never a half-written one.
      const contents = new Set(Array.from({ length: 60 }, (_, i) => `burst ${i}`));
      for (const message of list) {
        if (kept.some((k) => k.id === message.id) || answered.some((a) => a.id === message.id)) {
          continue;
        }
        assert.ok(contents.has(message.content), `unexpected ${message.content}`);
        assert.equal(message.version, 1);
        assert.equal(message.author, 'ada');
      }
      // The change log agrees: one change per write that happened (5 creates, 1 edit, 1 delete, the burst).
      const seq = Number((await fetch(`${url2}/api/messages?limit=1`)).headers.get('event-seq'));
      const burstStored = list.length - kept.length;
      assert.equal(seq, 5 + 1 + 1 + burstStored);
    } finally {
      second.child.kill('SIGTERM');
      await within(second.exited, BOUND_MS, 'exit');
    }
  });
});
