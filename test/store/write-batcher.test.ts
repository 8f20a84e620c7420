/**
 * Group commit on SQLite: writes submitted together share one transaction
 * (one COMMIT, so one fsync), each in its own savepoint, so a write that
 * throws fails alone, and a lost transaction fails every write in it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { WriteBatcher } from '../../src/store/sqlite/write-batcher.ts';

class Mapped extends Error {
  constructor(readonly original: unknown) {
    super('mapped');
  }
}

/** A real database file, with every COMMIT the batcher runs counted. */
function setUp(t: { after(fn: () => void): void }, options: { batching?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'write-batcher-'));
  const db = new Database(join(dir, 'b.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE rows (n INTEGER PRIMARY KEY)');
  const counts = { commits: 0 };
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    if (sql === 'COMMIT') {
      const run = statement.run.bind(statement);
      statement.run = (...args: unknown[]) => {
        counts.commits++;
        return run(...args);
      };
    }
    return statement;
  }) as typeof db.prepare;
  const batcher = new WriteBatcher(db, { mapError: (error) => new Mapped(error), ...options });
  const insert = db.prepare('INSERT INTO rows (n) VALUES (?)');
  const stored = () =>
    (db.prepare('SELECT n FROM rows ORDER BY n').pluck().all() as number[]).filter(Boolean);
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, batcher, insert, stored, counts };
}

test('writes submitted together share one transaction and each gets its own result', async (t) => {
  const { batcher, insert, stored, counts } = setUp(t);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      batcher.submit(() => {
        insert.run(i + 1);
        return `row ${i + 1}`;
      }),
    ),
  );
  assert.deepEqual(
    results,
    Array.from({ length: 20 }, (_, i) => `row ${i + 1}`),
  );
  assert.equal(counts.commits, 1);
  assert.deepEqual(
    stored(),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
});

test('a write submitted after a commit goes into the next transaction', async (t) => {
  const { batcher, insert, stored, counts } = setUp(t);
  await batcher.submit(() => insert.run(1));
  await batcher.submit(() => insert.run(2));
  assert.equal(counts.commits, 2);
  assert.deepEqual(stored(), [1, 2]);
});

test('a write that throws fails alone: its own statements are undone, the others commit', async (t) => {
  const { batcher, insert, stored, counts } = setUp(t);
  const boom = new Error('boom');
  const outcomes = await Promise.allSettled([
    batcher.submit(() => insert.run(1)),
    batcher.submit(() => {
      insert.run(2);
      throw boom;
    }),
    batcher.submit(() => insert.run(1)), // a constraint violation, also alone
    batcher.submit(() => insert.run(3)),
  ]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
  );
  const second = outcomes[1] as PromiseRejectedResult;
  assert.ok(second.reason instanceof Mapped);
  assert.equal(second.reason.original, boom);
  const third = outcomes[2] as PromiseRejectedResult;
  assert.match(String((third.reason as Mapped).original), /UNIQUE/);
  assert.equal(counts.commits, 1);
  assert.deepEqual(stored(), [1, 3]);
});

test('work left for the commit runs after the last write of the batch, in order, and not for a write that failed', async (t) => {
  const { db, batcher, insert, stored, counts } = setUp(t);
  const events: string[] = [];
  const write = (n: number, fail = false) =>
    batcher.submit(() => {
      events.push(`write ${n}`);
      insert.run(n);
      batcher.atCommit(() => {
        // Still inside the batch's transaction, after every savepoint is released.
        events.push(`commit work ${n}: ${db.inTransaction ? 'in' : 'out of'} the transaction`);
        insert.run(100 + n);
      });
      if (fail) throw new Error(`write ${n} refused`);
      return n;
    });
  const outcomes = await Promise.allSettled([write(1), write(2, true), write(3)]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.deepEqual(events, [
    'write 1',
    'write 2',
    'write 3',
    'commit work 1: in the transaction',
    'commit work 3: in the transaction',
  ]);
  assert.equal(counts.commits, 1);
  assert.deepEqual(stored(), [1, 3, 101, 103]);
  assert.throws(() => batcher.atCommit(() => undefined), /outside a write/);
});

test('work left for the commit that fails fails every write of the batch and commits none', async (t) => {
  const { batcher, insert, stored } = setUp(t);
  const outcomes = await Promise.allSettled([
    batcher.submit(() => insert.run(1)),
    batcher.submit(() => {
      insert.run(2);
      batcher.atCommit(() => insert.run(1)); // a constraint violation at commit time
    }),
  ]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['rejected', 'rejected'],
  );
  assert.match(
    String(((outcomes[0] as PromiseRejectedResult).reason as Mapped).original),
    /UNIQUE/,
  );
  assert.deepEqual(stored(), []);
  await batcher.submit(() => insert.run(3));
  assert.deepEqual(stored(), [3]);
});

test('with batching off each write runs at once, in a transaction of its own', async (t) => {
  const { db, batcher, insert, stored, counts } = setUp(t, { batching: false });
  const ran: number[] = [];
  const writes = [1, 2, 3].map((n) =>
    batcher.submit(() => {
      ran.push(n);
      assert.ok(db.inTransaction);
      insert.run(n);
    }),
  );
  // Before anything else runs: no waiting for the next turn of the event loop.
  assert.deepEqual(ran, [1, 2, 3]);
  assert.equal(counts.commits, 3);
  await Promise.all(writes);
  assert.deepEqual(stored(), [1, 2, 3]);
  const refused = new Error('refused');
  await assert.rejects(
    batcher.submit(() => {
      insert.run(4);
      throw refused;
    }),
    (error) => error instanceof Mapped && error.original === refused,
  );
  assert.deepEqual(stored(), [1, 2, 3]);
});

test('a lost transaction fails every write of it and commits none', async (t) => {
  const { db, batcher, insert, stored } = setUp(t);
  const lost = new Error('transaction lost');
  const outcomes = await Promise.allSettled([
    batcher.submit(() => insert.run(1)),
    batcher.submit(() => {
      // What a full disk or an I/O error does: SQLite ends the whole transaction.
      db.exec('ROLLBACK');
      throw lost;
    }),
    batcher.submit(() => insert.run(3)),
  ]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['rejected', 'rejected', 'rejected'],
  );
  for (const o of outcomes) {
    assert.equal(((o as PromiseRejectedResult).reason as Mapped).original, lost);
  }
  assert.deepEqual(stored(), []);
  assert.equal(db.inTransaction, false);
  // The batcher goes on with the next writes.
  await batcher.submit(() => insert.run(4));
  assert.deepEqual(stored(), [4]);
});

test('more writes than one transaction takes are split, all committed in order', async (t) => {
  const { batcher, insert, stored, counts } = setUp(t);
  const count = 600;
  await Promise.all(
    Array.from({ length: count }, (_, i) => batcher.submit(() => insert.run(i + 1))),
  );
  assert.ok(counts.commits >= 2, `${counts.commits} commits for ${count} writes`);
  assert.equal(stored().length, count);
});

test('a batch is answered only once afterCommit says it is durable; the next batch commits meanwhile', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'write-batcher-'));
  const db = new Database(join(dir, 'b.db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  db.exec('CREATE TABLE rows (n INTEGER PRIMARY KEY)');
  const insert = db.prepare('INSERT INTO rows (n) VALUES (?)');
  const flushes: (() => void)[] = [];
  const batcher = new WriteBatcher(db, {
    mapError: (error) => error,
    afterCommit: () => new Promise<void>((resolve) => flushes.push(resolve)),
  });
  const answered: number[] = [];
  const first = [1, 2].map((n) => batcher.submit(() => insert.run(n)).then(() => answered.push(n)));
  await new Promise((resolve) => setImmediate(resolve));
  const second = [3].map((n) => batcher.submit(() => insert.run(n)).then(() => answered.push(n)));
  await new Promise((resolve) => setImmediate(resolve));
  // Both batches are committed (visible), neither is answered yet.
  assert.equal(flushes.length, 2);
  assert.deepEqual(db.prepare('SELECT n FROM rows ORDER BY n').pluck().all(), [1, 2, 3]);
  assert.deepEqual(answered, []);
  flushes[0]!();
  await Promise.all(first);
  assert.deepEqual(answered, [1, 2]);
  flushes[1]!();
  await Promise.all(second);
  assert.deepEqual(answered, [1, 2, 3]);
});

test('when the commit cannot be made durable, no write of the batch is answered 2xx', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'write-batcher-'));
  const db = new Database(join(dir, 'b.db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  db.exec('CREATE TABLE rows (n INTEGER PRIMARY KEY)');
  const insert = db.prepare('INSERT INTO rows (n) VALUES (?)');
  const ioError = new Error('EIO: fdatasync failed');
  const own = new Error('refused by its own check');
  const batcher = new WriteBatcher(db, {
    mapError: (error) => new Mapped(error),
    afterCommit: () => Promise.reject(ioError),
  });
  const outcomes = await Promise.allSettled([
    batcher.submit(() => insert.run(1)),
    batcher.submit(() => {
      throw own;
    }),
  ]);
  assert.equal(((outcomes[0] as PromiseRejectedResult).reason as Mapped).original, ioError);
  assert.equal(((outcomes[1] as PromiseRejectedResult).reason as Mapped).original, own);
});
