/**
 * PostgresChangeLog.bounds(): the reads asked for in one turn of the event
 * loop share one query, sent after the turn, so each answer is still read
 * after its question; one asked while a query is under way gets a query of
 * its own. The session here stands in for the pool only to count and hold
 * the queries; the statement itself is run against PostgreSQL by the store
 * contract (room lists, the change feed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type pg from 'pg';
import { PostgresChangeLog } from '../../src/store/postgres/changes.ts';
import type { PostgresSession } from '../../src/store/postgres/postgres-store.ts';

/** A session whose queries are answered when the test says: `answer(latest)` answers the oldest one. */
function heldSession() {
  const held: { resolve: (rows: unknown[]) => void; reject: (e: unknown) => void }[] = [];
  let sent = 0;
  const session: PostgresSession = {
    query: <R extends pg.QueryResultRow>() => {
      sent += 1;
      return new Promise<R[]>((resolve, reject) => {
        held.push({ resolve: resolve as (rows: unknown[]) => void, reject });
      });
    },
    transaction: () => Promise.reject(new Error('not used')),
    withDeadline: (operation) => operation(new AbortController().signal),
  };
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    session,
    sent: () => sent,
    turn,
    answer: (latest: number) =>
      held.shift()!.resolve([{ latest: String(latest), purged_through: '0' }]),
    fail: (error: Error) => held.shift()!.reject(error),
  };
}

const watch = { config: {}, schema: null, onError: () => undefined };

test('reads asked in one turn share one query, sent after the turn', async () => {
  const db = heldSession();
  const log = new PostgresChangeLog(db.session, watch);
  const asked = [log.bounds(), log.bounds(), log.bounds()];
  assert.equal(db.sent(), 0, 'nothing goes out before the turn ends');
  await db.turn();
  assert.equal(db.sent(), 1);
  db.answer(7);
  for (const bounds of await Promise.all(asked)) {
    assert.deepEqual(bounds, { latest: 7, purgedThrough: 0 });
  }
});

test('a read asked while a query is under way does not share it: it gets the next one', async () => {
  const db = heldSession();
  const log = new PostgresChangeLog(db.session, watch);
  const first = log.bounds();
  await db.turn();
  assert.equal(db.sent(), 1);
  const second = log.bounds(); // the first query may have been read before this was asked
  await db.turn();
  assert.equal(db.sent(), 2);
  db.answer(7);
  db.answer(9);
  assert.equal((await first).latest, 7);
  assert.equal((await second).latest, 9);
});

test('with batching off every read is a query of its own, sent at once', async () => {
  const db = heldSession();
  const log = new PostgresChangeLog(db.session, watch, false);
  const asked = [log.bounds(), log.bounds()];
  assert.equal(db.sent(), 2);
  db.answer(3);
  db.answer(4);
  assert.deepEqual(
    (await Promise.all(asked)).map((b) => b.latest),
    [3, 4],
  );
});

test('a failed query fails every read that shared it; the next turn asks again', async () => {
  const db = heldSession();
  const log = new PostgresChangeLog(db.session, watch);
  const asked = [log.bounds(), log.bounds()];
  await db.turn();
  const down = new Error('store unavailable');
  db.fail(down);
  for (const outcome of await Promise.allSettled(asked)) {
    assert.equal((outcome as PromiseRejectedResult).reason, down);
  }
  const again = log.bounds();
  await db.turn();
  assert.equal(db.sent(), 2);
  db.answer(5);
  assert.equal((await again).latest, 5);
});
