/**
 * Every start script in package.json, and the production start the README
 * gives (`node dist/server.js` after `npm run build`), serves requests and
 * stops on SIGTERM and on SIGINT sent to the process that was started (npm,
 * for a script): the service itself exits with code 0, no server process is
 * left behind, and its port is free again.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { eventually } from '../events/event-helpers.ts';
import {
  alive,
  listeningOn,
  postMessage,
  startServer,
  tempDir,
  within,
  type StartOptions,
} from './server-process.ts';

const BOUND_MS = 60_000;
const ROOT = new URL('../../', import.meta.url).pathname;
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;
const startScripts = Object.keys(scripts).filter((name) => /^start(:|$)/.test(name));

const starts: [string, StartOptions][] = [
  ...startScripts.map((script): [string, StartOptions] => [
    `npm run ${script}`,
    { via: 'npm', script },
  ]),
  ['node dist/server.js', { via: 'build' }],
];

describe('start scripts: serve, then stop on a signal', { concurrency: 2 }, () => {
  const dir = tempDir();

  before(() => {
    // The production build, once, for the starts that run it.
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, `npm run build: ${build.stdout}${build.stderr}`);
  });

  it('covers npm start and npm run start:prod at least', () => {
    assert.ok(
      startScripts.includes('start') && startScripts.includes('start:prod'),
      startScripts.join(),
    );
  });

  for (const [name, options] of starts) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      it(`${name}: ${signal} stops the service, exit code 0, port freed`, async () => {
        const file = join(dir, `${name.replace(/\W+/g, '-')}-${signal}.db`);
        const server = startServer({
          ...options,
          env: { PORT: '0', DATABASE_URL: `sqlite:${file}` },
        });
        const url = await within(server.listening, BOUND_MS, 'listening');
        const pid = server.serverPid()!;
        const port = Number(new URL(url).port);
        assert.equal((await fetch(`${url}/`)).status, 200, 'the page');
        assert.equal((await postMessage(url, `served by ${name}`)).status, 201);
        const list = (await (await fetch(`${url}/api/messages`)).json()) as { content: string }[];
        assert.deepEqual(
          list.map((m) => m.content),
          [`served by ${name}`],
        );

        server.child.kill(signal);
        const exit = await within(server.exited, BOUND_MS, 'exit');
        assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
        assert.equal((await server.logged('stopping')).signal, signal);
        await server.logged('stopped');
        await eventually(() => !alive(pid), 'the server process gone', 10_000);
        assert.equal(await listeningOn(port), false, 'the port is free');
      });
    }
  }
});
