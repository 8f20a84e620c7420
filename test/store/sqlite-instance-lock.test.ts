/**
 * The service's hold on a SQLite file (src/store/sqlite/instance-lock.ts),
 * across processes: several starts waiting for the same file take it one
 * after the other as each holder lets go, none blocking another (an earlier
 * version kept a shared lock while waiting, and two waiters could block each
 * other until both gave up); and the lock follows the file's real path, so a
 * start through a symbolic link waits for it too. In one process: a reader of
 * the lock file does not hold it off, and an app whose migration fails lets
 * go of the file.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { buildApp } from '../../src/app.ts';
import { defaultConfig } from '../../src/config.ts';
import { InstanceLock, lockFileOf } from '../../src/store/sqlite/instance-lock.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const WAITERS = 3;
const ROUNDS = 5;
/** Long enough that only a deadlock, never a slow machine, ends a wait. */
const WAIT_MS = 60_000;
const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Holder {
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first line that is one of `wanted`. */
  said(...wanted: string[]): Promise<string>;
  release(): Promise<number | null>;
}

function holder(file: string, waitMs = WAIT_MS): Holder {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/store/fixtures/hold-sqlite.ts', file, String(waitMs)],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.add(child);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const listener of listeners) listener(line);
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    lines,
    said: (...wanted) =>
      new Promise((resolve, reject) => {
        const seen = lines.find((l) => wanted.some((w) => l.startsWith(w)));
        if (seen !== undefined) return resolve(seen);
        const listener = (line: string) => {
          if (wanted.some((w) => line.startsWith(w))) {
            listeners.delete(listener);
            resolve(line);
          }
        };
        listeners.add(listener);
        void exited.then(() => reject(new Error(`exited before ${wanted}: ${lines.join(' | ')}`)));
      }),
    release: async () => {
      child.stdin!.end('release\n');
      return exited;
    },
  };
}

describe('the hold on a SQLite file, across processes', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-instance-lock-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${WAITERS} waiting starts take the file in turn, ${ROUNDS} rounds, none blocking another`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const file = join(dir, `queue-${round}.db`);
      let current = holder(file);
      assert.equal(await current.said('held', 'refused'), 'held');
      const waiting = Array.from({ length: WAITERS }, () => holder(file));
      // Each has tried once and now waits on the file.
      for (const w of waiting) assert.equal(await w.said('waiting', 'held', 'refused'), 'waiting');
      while (waiting.length > 0) {
        // One holder at a time: none of those still waiting has taken the file meanwhile.
        for (const w of waiting) {
          assert.equal(w.lines.includes('held'), false, `two held ${file} at once`);
        }
        const next = Promise.race(
          waiting.map(async (w) => {
            assert.equal(await w.said('held', 'refused'), 'held', w.lines.join(' | '));
            return w;
          }),
        );
        next.catch(() => undefined); // awaited below, after the release
        assert.equal(await current.release(), 0);
        current = await next;
        waiting.splice(waiting.indexOf(current), 1);
      }
      assert.equal(await current.release(), 0);
    }
  });

  it('a start through a symbolic link to a held file waits for it too', async () => {
    const file = join(dir, 'real.db');
    const link = join(dir, 'link.db');
    const first = holder(file);
    assert.equal(await first.said('held', 'refused'), 'held');
    symlinkSync(file, link);
    const second = holder(link, 200);
    const said = await second.said('held', 'refused');
    assert.match(said, /^refused: the SQLite file .*link\.db is in use .*real\.db-lock\)$/);
    assert.deepEqual(second.lines, ['waiting', said]);
    assert.equal(await first.release(), 0);
  });

  it('a start through a symbolic link to a file not made yet finds the lock of the file made there', async () => {
    const file = join(dir, 'made-later.db');
    const link = join(dir, 'dangling.db');
    symlinkSync(file, link);
    const first = holder(link);
    assert.equal(await first.said('held', 'refused'), 'held');
    const second = holder(file, 200);
    assert.match(await second.said('held', 'refused'), /^refused: .*made-later\.db-lock\)$/);
    assert.equal(await first.release(), 0);
  });
});

describe('the hold on a SQLite file, in one process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-instance-lock-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a connection reading the lock file does not hold it off', () => {
    // Deterministic form of the two waiters' deadlock: a holder that keeps only a read lock
    // while it waits (the first design did) blocks whoever comes next.
    const file = join(dir, 'read.db');
    const reader = new Database(lockFileOf(file));
    try {
      reader.prepare('BEGIN').run();
      reader.prepare('SELECT count(*) FROM sqlite_master').get();
      assert.doesNotThrow(() => InstanceLock.take(file, { waitMs: 300 }).release());
    } finally {
      reader.close();
    }
  });

  it('an app whose migration fails lets go of the file: a second try fails the same way at once', async () => {
    const file = join(dir, 'broken.db');
    // A table the first migration creates, already there: the migration fails.
    const broken = new Database(file);
    broken.exec('CREATE TABLE messages (x)');
    broken.close();
    const config = defaultConfig({
      databaseUrl: `sqlite:${file}`,
      logLevel: 'silent',
      sqliteInstanceWaitMs: 0,
    });
    await assert.rejects(buildApp(config), /already exists/);
    // Still held, this would be SqliteFileInUse.
    await assert.rejects(buildApp(config), /already exists/);
  });
});
