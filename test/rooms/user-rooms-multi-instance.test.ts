/**
 * A subject's room list on one instance right after its memberships moved
 * through another (PostgreSQL, auth on). The listing instance keeps each
 * subject's memberships between lists; each write here is answered before the
 * other instance can have heard of it through NOTIFY, so a list that trusted
 * what it kept without asking where the change log stands would show the old
 * state.
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
        await instances.call(2, bob, 'PUT', markerPath('plans', 'bob'), { lastRead: ids[i] }, 200);
        const [entry] = await list(1, bob);
        assert.equal(entry?.lastRead, ids[i], `round ${i}: the marker set through instance 2`);
        assert.equal(entry?.unread, ROUNDS - 1 - i);
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
