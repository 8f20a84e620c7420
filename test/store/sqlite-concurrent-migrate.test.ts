/**
 * Processes started together on one SQLite file all come up: none applies
 * a migration another has applied meanwhile ("table already exists"), and
 * each version is recorded once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.ts';

const PROCESSES = 4;
const ROUNDS = 5;
/** The race on a new file is narrower (a moment at open): more rounds to meet it. */
const NEW_FILE_ROUNDS = 10;
const ROOT = new URL('../../', import.meta.url).pathname;
const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

function migrator(file: string, openOnGo: boolean) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/store/fixtures/migrate-sqlite.ts',
      file,
      ...(openOnGo ? ['open-on-go'] : []),
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.add(child);
  const lines: string[] = [];
  const ready = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (line === 'ready') resolve();
    });
  });
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null, lines }));
  return { child, ready, exited };
}

/** Starts the processes together (each has loaded, and opened the file unless `openOnGo`), checks each migrated. */
async function migrateTogether(file: string, openOnGo: boolean): Promise<void> {
  const all = Array.from({ length: PROCESSES }, () => migrator(file, openOnGo));
  await Promise.all(all.map((m) => m.ready));
  for (const m of all) m.child.stdin!.end('go\n');
  const results = await Promise.all(all.map((m) => m.exited));
  for (const { code, lines } of results) {
    assert.deepEqual(lines, ['ready', 'migrated'], lines.join('\n'));
    assert.equal(code, 0);
  }
  const check = new Database(file, { readonly: true });
  try {
    assert.deepEqual(
      check.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all(),
      sqliteMigrations.map((m) => m.version),
    );
  } finally {
    check.close();
  }
}

describe('processes migrating one SQLite file at the same moment', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-concurrent-migrate-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${PROCESSES} on an existing file, ${ROUNDS} rounds: all migrate, none applies one twice`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const file = join(dir, `existing-${round}.db`);
      // A file that exists, with its (empty) record of versions: what processes find on an
      // upgrade. No process then waits for the lock just to read which versions are applied.
      const made = new Database(file);
      made.pragma('journal_mode = WAL');
      made.exec(
        'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      made.close();
      await migrateTogether(file, false);
    }
  });

  it(`${PROCESSES} making one new file, ${NEW_FILE_ROUNDS} rounds: all open it (switching it to WAL) and migrate`, async () => {
    for (let round = 0; round < NEW_FILE_ROUNDS; round++) {
      await migrateTogether(join(dir, `new-${round}.db`), true);
    }
  });
});
