/** WalSync: the log flush that makes SQLite group commits durable off the event loop. */
import assert from 'node:assert/strict';
import fs, { mkdtempSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { WalSync } from '../../src/store/sqlite/wal-sync.ts';

test('flushes requested together or while one runs all resolve, and close waits for them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wal-sync-'));
  const file = join(dir, 'w.db');
  const db = new Database(file);
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE rows (n INTEGER PRIMARY KEY)');
  const sync = new WalSync(file);
  const order: string[] = [];
  const flushes = [1, 2, 3].map((n) => {
    db.prepare('INSERT INTO rows (n) VALUES (?)').run(n);
    return sync.flush().then(() => order.push(`flushed ${n}`));
  });
  const closed = sync.close().then(() => order.push('closed'));
  await Promise.all([...flushes, closed]);
  assert.deepEqual(order, ['flushed 1', 'flushed 2', 'flushed 3', 'closed']);
});

test('flushes share one fdatasync while one runs; with sharing off each gets its own', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wal-sync-'));
  const file = join(dir, 'w.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE rows (n INTEGER PRIMARY KEY)');
  // Counts the real fdatasync calls (WalSync imports it from node:fs).
  const real = fs.fdatasync;
  let calls = 0;
  fs.fdatasync = ((...args: Parameters<typeof real>) => {
    calls += 1;
    return real(...args);
  }) as typeof real;
  syncBuiltinESMExports();
  t.after(() => {
    fs.fdatasync = real;
    syncBuiltinESMExports();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const shared of [true, false]) {
    const sync = new WalSync(file, { shared });
    calls = 0;
    // The first starts a flush; the other three wait for the next.
    await Promise.all([1, 2, 3, 4].map(() => sync.flush()));
    assert.equal(calls, shared ? 2 : 4, `shared=${shared}`);
    await sync.close();
  }
});

test('a database without a log file is refused at once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wal-sync-'));
  try {
    assert.throws(() => new WalSync(join(dir, 'missing.db')), /ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
