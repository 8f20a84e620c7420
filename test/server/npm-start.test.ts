/**
 * `npm start` serves the API with no other step, and SIGTERM/SIGINT stop it
 * gracefully through npm: /readyz turns 503 first, no new connections,
 * in-flight requests finish, exit code 0.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { alive, postMessage, startServer, tempDir, within } from './server-process.ts';

const BOUND_MS = 60_000;

describe('npm start', { concurrency: 2 }, () => {
  const dir = tempDir();

  it('serves the API on SQLite with nothing else to do; SIGTERM to npm stops it gracefully, exit 0', async () => {
    const file = join(dir, 'fresh', 'nested', 'messages.db');
    const server = startServer({ via: 'npm', env: { PORT: '0', DATABASE_URL: `sqlite:${file}` } });
    const url = await within(server.listening, BOUND_MS, 'listening');
    const pid = server.serverPid()!;
    const created = await postMessage(url, 'hello from npm start');
    assert.equal(created.status, 201);
    const message = (await created.json()) as { id: string };
    const got = await fetch(`${url}/api/messages/${message.id}`);
    assert.equal(got.status, 200);
    const list = (await (await fetch(`${url}/api/messages`)).json()) as unknown[];
    assert.equal(list.length, 1);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    assert.ok(existsSync(file), 'the SQLite file was created on demand, directories too');

    server.child.kill('SIGTERM');
    const exit = await within(server.exited, BOUND_MS, 'exit');
    assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
    assert.equal((await server.logged('stopping')).signal, 'SIGTERM');
    await server.logged('stopped');
    assert.equal(alive(pid), false, 'no orphaned server');
  });

  it('SIGINT to the npm process: graceful stop, exit code 0, the server process is gone', async () => {
    const server = startServer({
      via: 'npm',
      env: { PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'sigint.db')}` },
    });
    const url = await within(server.listening, BOUND_MS, 'listening');
    const pid = server.serverPid()!;
    assert.equal((await postMessage(url, 'x')).status, 201);
    server.child.kill('SIGINT');
    const exit = await within(server.exited, BOUND_MS, 'exit');
    assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
    assert.equal((await server.logged('stopping')).signal, 'SIGINT');
    await server.logged('stopped');
    assert.equal(alive(pid), false, 'no orphaned server');
  });

  it('the same signal twice at once (Ctrl-C in a terminal under npm) is still one graceful stop', async () => {
    const server = startServer({
      env: { PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'twice.db')}` },
    });
    await within(server.listening, BOUND_MS, 'listening');
    server.child.kill('SIGINT');
    server.child.kill('SIGINT');
    assert.deepEqual(await within(server.exited, BOUND_MS, 'exit'), { code: 0, signal: null });
    await server.logged('stopped');
  });

  it('during shutdown /readyz turns 503 first, in-flight requests finish, then no new connections', async () => {
    const server = startServer({
      via: 'npm',
      env: {
        PORT: '0',
        DATABASE_URL: `sqlite:${join(dir, 'drain.db')}`,
        SHUTDOWN_DRAIN_MS: '1500',
      },
    });
    const url = await within(server.listening, BOUND_MS, 'listening');
    const { port } = new URL(url);
    // A request in flight: headers and half the body sent, the rest after the signal.
    const body = JSON.stringify({ author: 'ada', content: 'sent across the shutdown' });
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let answer = '';
    // The whole answer: its head, then as many body bytes as Content-Length says.
    const answered = new Promise<void>((resolve, reject) => {
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        answer += chunk;
        const end = answer.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: (\d+)/i.exec(answer);
        if (end !== -1 && length && Buffer.byteLength(answer.slice(end + 4)) >= Number(length[1])) {
          resolve();
        }
      });
      socket.once('close', () => reject(new Error(`closed without a whole answer: ${answer}`)));
    });
    answered.catch(() => undefined);
    socket.write(
      `POST /api/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );

    server.child.kill('SIGTERM');
    await within(server.logged('stopping'), BOUND_MS, 'stopping');
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 503, 'not ready any more');
    assert.ok(ready.headers.get('retry-after'));
    assert.equal((await fetch(`${url}/healthz`)).status, 200, 'still serving while draining');

    // After the drain the listener closes: new connections are refused...
    let refused = false;
    for (let attempt = 0; attempt < 100 && !refused; attempt += 1) {
      refused = await fetch(`${url}/healthz`).then(
        () => false,
        () => true,
      );
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(refused, 'no new connections once the listener is closed');
    assert.equal(server.child.exitCode, null, 'still running: a request is in flight');

    // ...while the request in flight still gets its answer, and the write is kept.
    // (write, not end: a client that half-closes its side has given up on the request)
    socket.write(body.slice(10));
    await within(answered, BOUND_MS, 'in-flight answer').catch((error: Error) =>
      assert.fail(`${error.message}\nserver said:\n${server.stdout()}\n${server.stderr()}`),
    );
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 201 /, 'the in-flight request finished');

    assert.deepEqual(await within(server.exited, BOUND_MS, 'exit'), { code: 0, signal: null });
    await server.logged('stopped');

    const again = startServer({
      env: { PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'drain.db')}` },
    });
    const againUrl = await within(again.listening, BOUND_MS, 'listening again');
    const list = (await (await fetch(`${againUrl}/api/messages`)).json()) as { content: string }[];
    assert.deepEqual(
      list.map((m) => m.content),
      ['sent across the shutdown'],
    );
    again.child.kill('SIGTERM');
    assert.equal((await within(again.exited, BOUND_MS, 'exit')).code, 0);
  });
});
