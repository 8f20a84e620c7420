/** Settings are checked at start: a bad one stops it with one clear line and exit code 1; a flag wins over the environment. */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startServer, tempDir, within } from './server-process.ts';

const START_MS = 60_000;

async function refusedStart(env: Record<string, string>, args: string[] = []) {
  const server = startServer({ env, args });
  const { code } = await within(server.exited, START_MS, 'exit');
  const lines = server
    .stderr()
    .split('\n')
    .filter((l) => l.trim() !== '');
  return { code, lines, stdout: server.stdout() };
}

describe('settings at start', { concurrency: 4 }, () => {
  const dir = tempDir();
  const db = `sqlite:${join(dir, 'settings.db')}`;

  const bad: [string, Record<string, string>, string[], RegExp][] = [
    ['PORT not a number', { PORT: 'abc', DATABASE_URL: db }, [], /PORT/],
    ['--port out of range', { DATABASE_URL: db }, ['--port', '70000'], /--port/],
    ['DATABASE_URL of an unknown kind', { DATABASE_URL: 'mysql://x@y/z' }, [], /DATABASE_URL/],
    ['LOG_LEVEL unknown', { LOG_LEVEL: 'loud', DATABASE_URL: db }, [], /LOG_LEVEL/],
    [
      'RATE_LIMIT_WRITE malformed',
      { RATE_LIMIT_WRITE: 'fast', DATABASE_URL: db },
      [],
      /RATE_LIMIT_WRITE/,
    ],
    ['an unknown flag', { DATABASE_URL: db }, ['--no-such-flag', '1'], /no-such-flag/],
    [
      'settings that contradict each other',
      { DATABASE_URL: db, SHUTDOWN_DRAIN_MS: '20000', SHUTDOWN_TIMEOUT_MS: '10000' },
      [],
      /SHUTDOWN_DRAIN_MS/,
    ],
  ];
  for (const [what, env, args, names] of bad) {
    it(`${what}: exit code 1, one line on stderr naming it, no stack`, async () => {
      const { code, lines, stdout } = await refusedStart(env, args);
      assert.equal(code, 1);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, names);
      assert.doesNotMatch(lines[0]!, /\bat .*:\d+:\d+|Error:/);
      assert.equal(stdout, '', 'nothing else is printed');
    });
  }

  it('a store that cannot be reached at start: exit code 1, one line', async () => {
    const { code, lines } = await refusedStart({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing',
      STORE_TIMEOUT_MS: '1000',
    });
    assert.equal(code, 1);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /cannot start/);
  });

  it('a port already in use: exit code 1, one line', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const { code, lines } = await refusedStart({
        DATABASE_URL: `sqlite:${join(dir, 'port-in-use.db')}`,
        PORT: String(port),
      });
      assert.equal(code, 1);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /EADDRINUSE|in use/);
    } finally {
      holder.close();
    }
  });

  it('DATABASE_URL=sqlite::memory: runs a throwaway store; the chosen address is logged', async () => {
    const server = startServer({ env: { PORT: '0', DATABASE_URL: 'sqlite::memory:' } });
    const url = await within(server.listening, START_MS, 'listening');
    assert.match(
      url,
      /^http:\/\/127\.0\.0\.1:\d+$/,
      'HOST defaults to 127.0.0.1, PORT 0 picks one',
    );
    const created = await fetch(`${url}/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ author: 'ada', content: 'in memory' }),
    });
    assert.equal(created.status, 201);
    server.child.kill('SIGTERM');
    assert.equal((await within(server.exited, START_MS, 'exit')).code, 0);
  });

  it('a flag wins over the environment (--port over PORT, --database-url over DATABASE_URL)', async () => {
    // PORT names a port that is taken, DATABASE_URL is invalid: only the flags can make it start.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as { port: number }).port;
    const server = startServer({
      env: { PORT: String(taken), DATABASE_URL: 'mysql://not/supported' },
      args: ['--port', '0', '--database-url', `sqlite:${join(dir, 'flags.db')}`],
    });
    try {
      const url = await within(server.listening, START_MS, 'listening');
      assert.notEqual(new URL(url).port, String(taken));
      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);
      server.child.kill('SIGTERM');
      assert.equal((await within(server.exited, START_MS, 'exit')).code, 0);
    } finally {
      holder.close();
    }
  });
});
