/**
 * PostgreSQL: which of a room's writes wait for which. A write to a room's
 * messages holds the room's row FOR KEY SHARE, a read marker's write FOR NO
 * KEY UPDATE, a membership or room write FOR UPDATE: so a marker never waits
 * for a post in flight (readers of a busy room move their markers while it
 * is posted to), while a removal waits for both (the access rule judged at
 * commit), and a post or marker that comes while a removal is in flight
 * waits for it and is then refused. Each write is held in flight at the change log's lock, which it
 * takes last, by a transaction of the test's own; who waits for whom is
 * read from PostgreSQL (pg_blocking_pids), not from timings.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { defaultConfig } from '../../src/config.ts';
import { ErrorKinds, isAppError } from '../../src/errors.ts';
import { readerMayRead, type AccessFacts } from '../../src/domain/room-access.ts';
import type { Message } from '../../src/domain/message.ts';
import type { Store } from '../../src/domain/store.ts';
import { createStore } from '../../src/store/create-store.ts';
import { postgresEngine, skipUnlessEngine } from '../support/engines.ts';
import { PG_BASE_URL } from '../support/prerequisites.ts';
import { silent } from '../support/open-store.ts';

let clock = Date.parse('2026-11-24T10:00:00.000Z');
const at = () => new Date((clock += 1)).toISOString();

/**
 * The backends blocked by any of `pids`, with the kind of lock each waits
 * for: `advisory` is the change log's, `transactionid` or `tuple` a row's
 * (a row lock is waited for through the holder's transaction).
 */
async function blockedBy(client: pg.Client, pids: readonly number[]) {
  const { rows } = await client.query<{ pid: number; blockers: number[]; waits: string }>(
    `SELECT a.pid, pg_blocking_pids(a.pid) AS blockers,
        (SELECT string_agg(l.locktype, ',') FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted)
          AS waits
      FROM pg_stat_activity a WHERE pg_blocking_pids(a.pid) && $1::int[] ORDER BY a.pid`,
    [pids],
  );
  return rows;
}

/** Waits (bounded) until `count` backends are blocked by `pids`; returns the one that is new. */
async function newlyBlocked(
  client: pg.Client,
  pids: readonly number[],
  known: readonly number[],
  what: string,
) {
  for (let i = 0; i < 500; i += 1) {
    const found = (await blockedBy(client, pids)).filter((row) => !known.includes(row.pid));
    if (found.length > 0) {
      assert.equal(found.length, 1, what);
      return found[0]!;
    }
    await sleep(10);
  }
  assert.fail(`${what}: not seen waiting within 5 s`);
}

/**
 * A fresh schema with ada's private room `team`, bob a member and ada's first
 * message; `holdChangeLog` takes the change log's lock (as every write takes
 * it last, after its row locks) in a transaction of the test's own, and
 * answers its backend's pid.
 */
async function withTeam(
  fn: (team: {
    store: Store;
    holder: pg.Client;
    observer: pg.Client;
    first: Message;
    holdChangeLog: () => Promise<number>;
  }) => Promise<void>,
): Promise<void> {
  const db = await postgresEngine.createDatabase();
  const schema = new URL(db.url).searchParams.get('schema')!;
  const store = createStore(defaultConfig({ databaseUrl: db.url, logLevel: 'silent' }), silent);
  const holder = new pg.Client({ connectionString: PG_BASE_URL });
  const observer = new pg.Client({ connectionString: PG_BASE_URL });
  await holder.connect();
  await observer.connect();
  try {
    await store.migrate();
    await store.rooms.put('team', 'ada', 'ada', at(), () => ({ visibility: 'private', topic: '' }));
    await store.members.put('team', 'bob', 'ada', at(), () => 'member');
    const first = await store.messages.create(
      { id: uuidv7(), room: 'team', author: 'ada', content: 'hello', createdAt: at() },
      undefined,
      'ada',
    );
    const holdChangeLog = async () => {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext($1 || '.changes'))`, [schema]);
      return (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    };
    await fn({ store, holder, observer, first, holdChangeLog });
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await holder.end();
    await observer.end();
    await store.close();
    await db.cleanup();
  }
}

describe('room row locks on PostgreSQL', async () => {
  const skip = await skipUnlessEngine(postgresEngine);

  it(
    'a read marker does not wait for a post in flight; a removal waits for both',
    { skip },
    async () => {
      await withTeam(async ({ store, holder, observer, first, holdChangeLog }) => {
        const holderPid = await holdChangeLog();

        const post = store.messages.create(
          { id: uuidv7(), room: 'team', author: 'bob', content: 'in flight', createdAt: at() },
          undefined,
          'bob',
        );
        // Each write is listened to where it starts (and awaited below), so that a failure
        // while the test waits is this test's, not an unhandled rejection.
        post.catch(() => undefined);
        const posting = await newlyBlocked(observer, [holderPid], [], 'the post');
        assert.equal(posting.waits, 'advisory', 'the post waits at the change log');

        const marker = store.readMarkers.put('team', 'bob', first.id, () => true, 'bob');
        marker.catch(() => undefined);
        const marking = await newlyBlocked(
          observer,
          [holderPid, posting.pid],
          [posting.pid],
          'the marker',
        );
        assert.equal(
          marking.waits,
          'advisory',
          'the marker got past the room lock the post holds: it waits at the change log',
        );

        const removal = store.members.remove('team', 'bob', 'ada', 'ada', () => undefined);
        removal.catch(() => undefined);
        const removing = await newlyBlocked(
          observer,
          [posting.pid, marking.pid],
          [posting.pid, marking.pid],
          'the removal',
        );
        assert.match(
          removing.waits,
          /^(transactionid|tuple)$/,
          "the removal waits at the room's row",
        );
        assert.ok(
          removing.blockers.includes(posting.pid) || removing.blockers.includes(marking.pid),
          `for the writes in flight (${removing.blockers})`,
        );

        await holder.query('COMMIT');
        const [posted, marked, removed] = await Promise.all([post, marker, removal]);
        assert.equal(posted.content, 'in flight');
        assert.equal(marked.changed, true);
        assert.equal(removed.subject, 'bob');
        // The removal came after both: bob's post and marker were judged while he was a member.
        const changes = (await store.changes.since(0, 100)).map((c) => c.kind);
        assert.deepEqual(changes.slice(-3).sort(), [
          'member.removed',
          'message.created',
          'read-marker.updated',
        ]);
        assert.equal(changes.at(-1), 'member.removed');
      });
    },
  );
  it(
    'a post and a marker that come while a removal is in flight wait for it, then are refused',
    { skip },
    async () => {
      await withTeam(async ({ store, holder, observer, first, holdChangeLog }) => {
        const holderPid = await holdChangeLog();

        // bob's removal holds the room's row (FOR UPDATE) and waits at the change log.
        const removal = store.members.remove('team', 'bob', 'ada', 'ada', () => undefined);
        removal.catch(() => undefined);
        const removing = await newlyBlocked(observer, [holderPid], [], 'the removal');
        assert.equal(removing.waits, 'advisory');

        // Each write's outcome is taken where it starts (its refusal, or what went wrong): the
        // post may be refused before the removal's own promise settles, and a rejection nobody
        // listens to yet fails the run.
        const post = store.messages
          .create(
            { id: uuidv7(), room: 'team', author: 'bob', content: 'too late', createdAt: at() },
            undefined,
            'bob',
          )
          .then(
            () => 'the post went through after the removal',
            (error: unknown) => error,
          );
        const posting = await newlyBlocked(observer, [removing.pid], [], 'the post');
        assert.match(posting.waits, /^(transactionid|tuple)$/, "the post waits at the room's row");

        const facts: (AccessFacts | undefined)[] = [];
        const marker = store.readMarkers
          .put(
            'team',
            'bob',
            first.id,
            (seen) => {
              facts.push(seen.access);
              if (seen.access !== undefined && !readerMayRead(seen.access)) {
                throw new Error('may not read the room');
              }
              return true;
            },
            'bob',
          )
          .then(
            () => 'the marker moved after the removal',
            (error: unknown) => error,
          );
        const marking = await newlyBlocked(
          observer,
          [removing.pid, posting.pid],
          [posting.pid],
          'the marker',
        );
        assert.match(
          marking.waits,
          /^(transactionid|tuple)$/,
          "the marker waits at the room's row",
        );

        await holder.query('COMMIT');
        await removal;
        const refused = await post;
        assert.ok(isAppError(refused) && refused.kind === ErrorKinds.forbidden, String(refused));
        assert.match(String(await marker), /may not read the room/);
        assert.deepEqual(facts, [{ visibility: 'private', role: null }]);
        const kinds = (await store.changes.since(0, 100)).map((c) => c.kind);
        assert.equal(kinds.at(-1), 'member.removed', 'nothing of bob committed after his removal');
      });
    },
  );
});
