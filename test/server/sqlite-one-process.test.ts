/**
 * One process per SQLite file: a second start on a file that a running
 * service holds waits for it to let go (SQLITE_INSTANCE_WAIT_MS), then gives
 * up with one line; a start that overlaps the first's graceful stop says it
 * waits and comes up once the first has exited; a first process that was killed leaves no stale
 * lock. Real processes on a real file.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { postMessage, startServer, tempDir, within, type ServerProcess } from './server-process.ts';

const START_MS = 60_000;

function serve(file: string, env: Record<string, string> = {}) {
  return startServer({ env: { PORT: '0', DATABASE_URL: `sqlite:${file}`, ...env } });
}

/** SIGTERM, and a clean exit (code 0). */
async function stop(server: ServerProcess, what: string): Promise<void> {
  server.child.kill('SIGTERM');
  assert.equal((await within(server.exited, START_MS, `${what} exit`)).code, 0);
}

async function createdId(base: string, content: string): Promise<string> {
  const response = await postMessage(base, content);
  assert.equal(response.status, 201);
  return ((await response.json()) as { id: string }).id;
}

/** A first process on `file`, listening, with one message written: `content`. */
async function firstWith(file: string, content: string) {
  const first = serve(file);
  const base = await within(first.listening, START_MS, 'first listening');
  return { first, base, id: await createdId(base, content) };
}

describe('one process per SQLite file', () => {
  const dir = tempDir();

  it('a second start waits for the file, then exits 1 with one line naming it; the first serves on', async () => {
    const file = join(dir, 'refused.db');
    const first = serve(file);
    const base = await within(first.listening, START_MS, 'first listening');
    const second = serve(file, { SQLITE_INSTANCE_WAIT_MS: '500' });
    const { code } = await within(second.exited, START_MS, 'second exit');
    assert.equal(code, 1);
    const lines = second
      .stderr()
      .split('\n')
      .filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(
      lines[0]!,
      /^message-service: cannot start: the SQLite file .*refused\.db is in use by another process or store \(one per file; waited 500 ms for .*refused\.db-lock\)$/,
    );
    // It said it would wait, and never listened.
    assert.match(second.stdout(), /"msg":"waiting up to 500 ms for another process to let go/);
    assert.equal(second.stdout().includes('Server listening'), false);
    // The refused start touched nothing: the first still writes and reads.
    const id = await createdId(base, 'after the refused start');
    assert.equal((await fetch(`${base}/api/messages/${id}`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    await stop(first, 'first');
  });

  it('a start that overlaps the first one comes up once the first has stopped, on the same data', async () => {
    const file = join(dir, 'overlap.db');
    const { first, base: firstBase, id } = await firstWith(file, 'written by the first');
    const second = serve(file, { SQLITE_INSTANCE_WAIT_MS: '60000' });
    // It says that it waits, before it listens: the wait holds its start until the first lets go.
    const waiting = await within(
      Promise.race([
        second.logged(/^waiting up to 60000 ms for another process to let go of the SQLite file$/),
        second.listening.then(() => assert.fail('the second start listened without waiting')),
      ]),
      START_MS,
      'second waiting',
    );
    assert.match(String(waiting.lockFile), /overlap\.db-lock$/);
    assert.equal((await fetch(`${firstBase}/healthz`)).status, 200);
    assert.equal(second.stdout().includes('Server listening'), false, 'waits while the first runs');
    await stop(first, 'first');
    const secondBase = await within(second.listening, START_MS, 'second listening');
    const read = await fetch(`${secondBase}/api/messages/${id}`);
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { content: string }).content, 'written by the first');
    await stop(second, 'second');
  });

  it('a first process killed with SIGKILL leaves no lock behind', async () => {
    const file = join(dir, 'killed.db');
    const { first, id } = await firstWith(file, 'before the kill');
    first.child.kill('SIGKILL');
    assert.equal((await within(first.exited, START_MS, 'first exit')).signal, 'SIGKILL');
    // No wait at all: the lock must be free the moment the first is gone.
    const second = serve(file, { SQLITE_INSTANCE_WAIT_MS: '0' });
    const base = await within(second.listening, START_MS, 'second listening');
    assert.equal((await fetch(`${base}/api/messages/${id}`)).status, 200);
    await stop(second, 'second');
  });
});
