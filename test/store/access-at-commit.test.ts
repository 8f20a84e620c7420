/**
 * The room access rule judged inside a write's transaction, through the
 * store on every engine: a write named with a reader gets that reader's
 * facts of the room as its transaction sees them (a removal ordered before
 * it is seen), and a create whose reader may not read the room fails alone
 * in its group commit with the 403 of a private room.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { defaultConfig } from '../../src/config.ts';
import { ErrorKinds, isAppError } from '../../src/errors.ts';
import type { NewMessage } from '../../src/domain/message.ts';
import type { AccessFacts } from '../../src/domain/room-access.ts';
import type { Store } from '../../src/domain/store.ts';
import { createStore } from '../../src/store/create-store.ts';
import { engines, skipUnlessEngine, type Engine, type TestDatabase } from '../support/engines.ts';
import { schemaClient, untilBlockedBy } from '../support/pg-sessions.ts';
import { silent } from '../support/open-store.ts';

let clock = Date.parse('2026-11-21T10:00:00.000Z');
function at(): string {
  clock += 1;
  return new Date(clock).toISOString();
}

function message(author: string, room = 'team'): NewMessage {
  return { id: uuidv7(), room, author, content: `by ${author}`, createdAt: at() };
}

/** A store on a fresh database with ada's private room `team`, bob a member of it, and bob's message there. */
async function teamStore(engine: Engine) {
  const db = await engine.createDatabase();
  const store = createStore(defaultConfig({ databaseUrl: db.url, logLevel: 'silent' }), silent);
  await store.migrate();
  await store.rooms.put('team', 'ada', 'ada', at(), () => ({ visibility: 'private', topic: '' }));
  await store.members.put('team', 'bob', 'ada', at(), () => 'member');
  const mine = await store.messages.create(message('bob'), undefined, 'bob');
  return { db, store, mine };
}

async function closeAll(store: Store, db: TestDatabase): Promise<void> {
  await store.close();
  await db.cleanup();
}

/** An edit's check that keeps the access facts it was given and refuses (as the service does) when they say so. */
function recordingCheck(seen: (AccessFacts | undefined)[]) {
  return (_current: unknown, access: AccessFacts | undefined) => {
    seen.push(access);
    if (access !== undefined && access.visibility === 'private' && access.role === null) {
      throw new Error('may not read the room');
    }
  };
}

const edit = { content: 'edited', now: '2026-11-21T11:00:00.000Z', editedBy: 'bob' };

for (const engine of engines) {
  describe(`the access rule at commit [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);

    it(
      'a create whose reader may not read the room fails alone, with a 403',
      { skip },
      async () => {
        const { db, store } = await teamStore(engine);
        try {
          const rows = [message('bob'), message('eve'), message('bob'), message('ada')];
          const readers = ['bob', 'eve', 'bob', null];
          // Submitted in one turn: one group commit, which the refused row must not take down.
          const outcomes = await Promise.allSettled(
            rows.map((m, i) => store.messages.create(m, undefined, readers[i])),
          );
          assert.deepEqual(
            outcomes.map((o) => o.status),
            ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
          );
          const failure = (outcomes[1] as PromiseRejectedResult).reason;
          assert.ok(isAppError(failure) && failure.kind === ErrorKinds.forbidden, String(failure));
          assert.equal(failure.detail, 'The room team is private.');
          assert.equal(await store.messages.get(rows[1]!.id), undefined);
          // A room that is not one yet is made by the post, public: nothing to refuse.
          await store.messages.create(message('eve', 'elsewhere'), undefined, 'eve');
        } finally {
          await closeAll(store, db);
        }
      },
    );

    it('a write without a reader gets no access facts', { skip }, async () => {
      const { db, store, mine } = await teamStore(engine);
      try {
        const seen: (AccessFacts | undefined)[] = [];
        await store.messages.update(mine.id, edit, recordingCheck(seen));
        await store.messages.update(mine.id, edit, recordingCheck(seen), 'bob');
        assert.deepEqual(seen, [undefined, { visibility: 'private', role: 'member' }]);
      } finally {
        await closeAll(store, db);
      }
    });
  });
}

describe('the access rule at commit, ordered with a removal', async () => {
  const sqliteSkip = await skipUnlessEngine(engines[0]!);
  const postgresSkip = await skipUnlessEngine(engines[1]!);

  it('SQLite: an edit queued after a removal sees it', { skip: sqliteSkip }, async () => {
    const { db, store, mine } = await teamStore(engines[0]!);
    try {
      const seen: (AccessFacts | undefined)[] = [];
      // Both queued in this turn, the removal first: the writer commits them in that order.
      const removal = store.members.remove('team', 'bob', 'ada', 'ada', () => undefined);
      const update = store.messages.update(mine.id, edit, recordingCheck(seen), 'bob');
      // Listened to at once: the update may be refused before the removal's promise settles.
      update.catch(() => undefined);
      await removal;
      await assert.rejects(update, /may not read the room/);
      assert.deepEqual(seen, [{ visibility: 'private', role: null }]);
      assert.equal((await store.messages.get(mine.id))?.content, mine.content);
    } finally {
      await closeAll(store, db);
    }
  });

  it(
    'PostgreSQL: an edit waits for a removal holding the room and then sees it',
    { skip: postgresSkip },
    async () => {
      const { db, store, mine } = await teamStore(engines[1]!);
      const remover = await schemaClient(db.url);
      try {
        // A removal as members.ts makes it, held open: the room's row lock, then the delete.
        await remover.query('BEGIN');
        await remover.query("SELECT 1 FROM rooms WHERE name = 'team' FOR UPDATE");
        await remover.query("DELETE FROM memberships WHERE room = 'team' AND subject = 'bob'");
        const seen: (AccessFacts | undefined)[] = [];
        const update = store.messages.update(mine.id, edit, recordingCheck(seen), 'bob');
        update.catch(() => undefined);
        await untilBlockedBy(remover);
        assert.deepEqual(seen, [], 'the check waits for the room');
        await remover.query('COMMIT');
        await assert.rejects(update, /may not read the room/);
        assert.deepEqual(seen, [{ visibility: 'private', role: null }]);
        assert.equal((await store.messages.get(mine.id))?.content, mine.content);
      } finally {
        await remover.end();
        await closeAll(store, db);
      }
    },
  );
});

describe('PostgreSQL: create_messages and rooms made meanwhile; the rows that fail named', async () => {
  const skip = await skipUnlessEngine(engines[1]!);

  it(
    'a post into a room another transaction is making private waits for it, and is refused',
    { skip },
    async () => {
      const db = await engines[1]!.createDatabase();
      const store = createStore(defaultConfig({ databaseUrl: db.url, logLevel: 'silent' }), silent);
      await store.migrate();
      const maker = await schemaClient(db.url);
      try {
        // ada's PUT of a new private room, as rooms.ts makes it, held open before its commit.
        await maker.query('BEGIN');
        await maker.query(`INSERT INTO rooms (name, visibility, topic, created_by, created_at,
          updated_at, version) VALUES ('secret', 'private', '', 'ada', now(), now(), 1)`);
        await maker.query(`INSERT INTO memberships (room, subject, role, joined_at)
          VALUES ('secret', 'ada', 'owner', now())`);
        // eve posts to `secret`, not a room when she asks: her create would make it, public.
        const post = store.messages.create(message('eve', 'secret'), undefined, 'eve');
        post.catch(() => undefined);
        await untilBlockedBy(maker);
        await maker.query('COMMIT');
        const failure = await post.then(
          () => assert.fail('a post into a private room it may not read was stored'),
          (error: unknown) => error,
        );
        assert.ok(isAppError(failure) && failure.kind === ErrorKinds.forbidden, String(failure));
        assert.equal(failure.detail, 'The room secret is private.');
        const { rows } = await maker.query('SELECT count(*)::int AS n FROM messages');
        assert.equal(rows[0].n, 0);
        // ada's room is as she made it.
        assert.equal((await store.rooms.get('secret'))?.visibility, 'private');
      } finally {
        await maker.end();
        await closeAll(store, db);
      }
    },
  );

  it(
    'a failing batch names, in DETAIL, every row that breaks the rule it failed on',
    { skip },
    async () => {
      const { db, store, mine } = await teamStore(engines[1]!);
      const client = await schemaClient(db.url);
      try {
        // Six rows: eve (no member) posts to team at places 2 and 5; places 4 and 5 answer a
        // message of another room. The access rule is judged first.
        const rows = [1, 2, 3, 4, 5, 6].map((n) => ({
          ...message(n === 2 || n === 5 ? 'eve' : 'bob', n === 4 || n === 5 ? 'team' : 'elsewhere'),
          reader: n === 2 || n === 5 ? 'eve' : 'bob',
          replyTo: n === 4 || n === 5 ? uuidv7() : null,
        }));
        rows[1] = { ...rows[1]!, room: 'team' };
        await client.query(
          `INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
         VALUES ('elsewhere', 'public', '', NULL, now(), now(), 1)`,
        );
        const call = (batch: typeof rows) =>
          client.query(
            `SELECT create_messages($1::uuid[], $2::text[], $3::text[], $4::text[],
             $5::timestamptz[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
             $11::text[], $12::text[], $13::uuid[], $14::text[])`,
            [
              batch.map((r) => r.id),
              batch.map((r) => r.room),
              batch.map((r) => r.author),
              batch.map((r) => r.content),
              batch.map((r) => r.createdAt),
              batch.map((r) => JSON.stringify({ id: r.id })),
              batch.map(() => null),
              batch.map(() => null),
              batch.map(() => null),
              batch.map(() => null),
              batch.map(() => null),
              batch.map((r) => r.content),
              batch.map((r) => r.replyTo),
              batch.map((r) => r.reader),
            ],
          );
        await assert.rejects(call(rows), { code: 'MS003', detail: '2,5' });
        const allowed = rows.filter((_, i) => i !== 1 && i !== 4);
        await assert.rejects(call(allowed), { code: 'MS002', detail: '3' });
        // A reply to bob's message in team, from team, is one.
        allowed[2] = { ...allowed[2]!, replyTo: mine.id };
        await call(allowed);
        const { rows: stored } = await client.query('SELECT count(*)::int AS n FROM messages');
        assert.equal(stored[0].n, 1 + allowed.length);
      } finally {
        await client.end();
        await closeAll(store, db);
      }
    },
  );
});
