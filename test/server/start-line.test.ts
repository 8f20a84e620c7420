/**
 * What a person starting the service sees: `.env` read from the working
 * directory, the start line (version, store, address), one log line per
 * request, JSON when standard output is a pipe and readable lines in a
 * terminal.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { tempDir, within } from './server-process.ts';

const BOUND_MS = 60_000;
const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

/** The service started in `cwd` (so that its `.env`, if any, is the one read), output collected. */
function start(cwd: string, env: Record<string, string>, command?: (node: string[]) => string[]) {
  const node = [process.execPath, '--import', TSX, SERVER];
  const [file, ...args] = command ? command(node) : node;
  const child = spawn(file!, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  /** Resolves with the output once it matches `pattern`; rejects if the process ends first. */
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (pattern.test(out)) resolve(out);
        else if (child.exitCode !== null) reject(new Error(`exited: ${out}\n${err}`));
        else setTimeout(check, 20);
      };
      check();
    });
  return { child, waitFor, exited, output: () => out };
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the start line, .env and the request log', () => {
  it('reads .env (the environment wins), says version, store and address, and logs each request once, as JSON into a pipe', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, '.env'),
      ['# read at start', 'PORT=0', 'DATABASE_URL=sqlite:from-env-file.db', 'LOG_LEVEL=info'].join(
        '\n',
      ),
    );
    // DATABASE_URL is set in the environment too, and wins over the file; PORT comes from the file.
    const server = start(dir, { DATABASE_URL: 'sqlite::memory:' });
    const text = await within(
      server.waitFor(/message-service \S+ listening at http/),
      BOUND_MS,
      'the start line',
    );
    const startLine = jsonLines(text).find((l) => l.version !== undefined);
    assert.ok(startLine, text);
    assert.equal(startLine.version, version);
    assert.equal(startLine.store, 'sqlite');
    assert.equal(startLine.storeLocation, ':memory:', 'the environment wins over .env');
    assert.equal(startLine.envFile, true);
    assert.match(String(startLine.address), /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(startLine.address, 'http://127.0.0.1:0', 'PORT=0 from .env: a free port');
    assert.match(
      String(startLine.msg),
      new RegExp(
        `^message-service ${version.replace(/\./g, '\\.')} listening at http://127\\.0\\.0\\.1:\\d+, store: sqlite :memory: \\(settings from \\.env too\\)$`,
      ),
    );

    const response = await fetch(`${String(startLine.address)}/healthz`, {
      headers: { 'x-request-id': 'start-line-test' },
    });
    assert.equal(response.status, 200);
    const logged = await within(server.waitFor(/start-line-test/), BOUND_MS, 'the request line');
    const lines = jsonLines(logged).filter((l) => l.reqId === 'start-line-test');
    assert.equal(lines.length, 1, 'one line per request');
    assert.match(String(lines[0]!.msg), /^GET \/healthz 200 \d+(\.\d+)? ms$/);
    assert.deepEqual(lines[0]!.res, { statusCode: 200 });
    assert.equal(typeof lines[0]!.responseTime, 'number');
    server.child.kill('SIGTERM');
    await within(server.exited, BOUND_MS, 'exit');
  });

  it('without .env starts all the same, and says so', async () => {
    const server = start(tempDir(), { PORT: '0', DATABASE_URL: 'sqlite::memory:' });
    const text = await within(
      server.waitFor(/message-service \S+ listening at http/),
      BOUND_MS,
      'the start line',
    );
    const startLine = jsonLines(text).find((l) => l.version !== undefined);
    assert.equal(startLine?.envFile, false);
    assert.doesNotMatch(String(startLine?.msg), /\.env/);
    server.child.kill('SIGTERM');
    await within(server.exited, BOUND_MS, 'exit');
  });

  it('writes readable lines, not JSON, when standard output is a terminal', async () => {
    // `script` (util-linux) runs the service on a pseudo-terminal and copies what it shows.
    const server = start(tempDir(), { PORT: '0', DATABASE_URL: 'sqlite::memory:' }, (node) => [
      'script',
      '--quiet',
      '--return',
      '--command',
      node.map((part) => `'${part}'`).join(' '),
      '/dev/null',
    ]);
    const text = await within(
      server.waitFor(/message-service \S+ listening at http/),
      BOUND_MS,
      'the start line',
    );
    const shown = stripVTControlCharacters(text);
    assert.match(
      shown,
      /INFO.*: message-service \S+ listening at http:\/\/127\.0\.0\.1:\d+, store: sqlite :memory:/,
    );
    assert.equal(jsonLines(shown).length, 0, 'no JSON lines');
    server.child.kill('SIGTERM');
    await within(server.exited, BOUND_MS, 'exit');
  });
});
