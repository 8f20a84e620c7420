/**
 * A subject's room list on one instance right after its memberships moved
 * through another (PostgreSQL, auth on). The listing instance keeps each
 * subject's memberships between lists (its /metrics count the store reads:
 * one after each change of bob's, none while nothing of his moved). Each list
 * follows the write's answer at once, usually before NOTIFY has reached the
 * listing instance, so a list that trusted what it kept without asking where
 * the change log stands would show the old state: the old marker, or an
 * unread count without the message just posted through instance 2 (it failed
 * in round 0 or 1 of every run tried so; timing decides which, not whether).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UserRoom } from '../../src/domain/room.ts';
import { AUTH } from '../auth/tokens.ts';
import { Instances, user, type User } from '../events/room-access-support.ts';
import { postgresEngine, skipUnlessEngine, type TestDatabase } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { markerPath, memberPath, roomPath, userRoomsPath } from './rooms-support.ts';

/** Rounds of write-through-one, list-on-the-other: a stale answer in any fails the test. */
const ROUNDS = 10;

describe('room lists across instances (postgres, auth on)', async () => {
  const skip = await skipUnlessEngine(postgresEngine);
  let db: TestDatabase;
  const apps: TestApp[] = [];
  let instances: Instances;
  let ada: User;
  let bob: User;

  before(async () => {
    if (skip) return;
    db = await postgresEngine.createDatabase();
    apps.push(...(await Promise.all([1, 2].map(() => startTestApp(postgresEngine, AUTH, {}, db)))));
    instances = new Instances(apps);
    [ada, bob] = await Promise.all([user('ada'), user('bob')]);
  });
  after(async () => {
    await Promise.all(apps.map((t) => t.close()));
    await db?.cleanup();
  });

  /** How many times instance `n` read a subject's memberships from the store (its /metrics). */
  const memberReads = async (n: number) => {
    const response = await apps[n - 1]!.app.http.inject({
      method: 'GET',
      url: '/metrics',
      headers: ada.auth,
    });
    assert.equal(response.statusCode, 200, response.body);
    const line = response.body
      .split('\n')
      .find((l) =>
        l.startsWith('store_operation_duration_seconds_count{operation="members.memberRooms"'),
      );
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };

  const list = async (n: number, who: User) =>
    (await instances.call(n, who, 'GET', userRoomsPath(who.sub), undefined, 200)).json<
      UserRoom[]
    >();

  it(
    'markers, roles, room changes and leaving made through instance 2 show at once on instance 1',
    { skip },
    async () => {
      await instances.call(1, ada, 'PUT', roomPath('plans'), { visibility: 'private' }, 201);
      await instances.call(1, ada, 'PUT', memberPath('plans', 'bob'), {}, 201);
      const ids: string[] = [];
      for (let i = 0; i < ROUNDS; i++)
        ids.push((await instances.post(1, ada, 'plans', `m${i}`)).id);
      const [first] = await list(1, bob);
      assert.deepEqual([first?.lastRead, first?.unread], [null, ROUNDS], 'joined an empty room');

      for (let i = 0; i < ROUNDS; i++) {
        const reads = await memberReads(1);
        await instances.call(2, bob, 'PUT', markerPath('plans', 'bob'), { lastRead: ids[i] }, 200);
        const [entry] = await list(1, bob);
        assert.equal(entry?.lastRead, ids[i], `round ${i}: the marker set through instance 2`);
        // After ids[i]: the rest of the m's, and the i messages posted between earlier rounds.
        assert.equal(entry?.unread, ROUNDS - 1);
        assert.equal(await memberReads(1), reads + 1, `round ${i}: the moved marker read again`);
        // Nothing of bob's moved since: instance 1 answers from what it kept, counts still fresh.
        await instances.post(2, ada, 'plans', `between ${i}`);
        const [again] = await list(1, bob);
        assert.deepEqual([again?.lastRead, again?.unread], [ids[i], ROUNDS]);
        assert.equal(await memberReads(1), reads + 1, `round ${i}: kept, not read again`);
      }
      await instances.call(2, ada, 'PUT', memberPath('plans', 'bob'), { role: 'owner' }, 200);
      assert.equal((await list(1, bob))[0]?.role, 'owner');
      const topic = await instances.call(2, ada, 'PUT', roomPath('plans'), { topic: 'moved' }, 200);
      const [entry] = await list(1, bob);
      assert.equal(entry?.topic, 'moved');
      assert.equal(entry?.version, topic.json<{ version: number }>().version);
      await instances.call(2, bob, 'DELETE', memberPath('plans', 'bob'), undefined, 200);
      assert.deepEqual(await list(1, bob), []);
    },
  );
});
