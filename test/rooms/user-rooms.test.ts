/**
 * GET /api/users/{subject}/rooms through HTTP on every engine: the rooms a
 * subject is a member of, latest activity first (the later of the newest
 * message's createdAt and the room's createdAt; ties by name), each with its
 * role, lastMessage, lastRead and unread; limit; whose list (403, admins).
 * A hand-moved clock makes activity exact.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Config } from '../../src/config.ts';
import type { Room, UserRoom } from '../../src/domain/room.ts';
import type { Engine } from '../support/engines.ts';
import { AUTH } from '../auth/tokens.ts';
import { assertProblem, eachEngine, onlyError, withApp } from '../http/http-contract.ts';
import {
  ManualClock,
  callerFor,
  memberPath,
  roomPath,
  userRoomsPath,
  type Caller,
} from './rooms-support.ts';

interface World {
  readonly clock: ManualClock;
  as(sub: string, admin?: boolean): Promise<Caller>;
}

function withWorld(
  engine: Engine,
  overrides: Partial<Config>,
  fn: (world: World) => Promise<void>,
): Promise<void> {
  const clock = new ManualClock();
  return withApp(
    engine,
    (app) =>
      fn({
        clock,
        as: (sub, admin = false) => callerFor(app, 'authJwtSecret' in overrides, sub, admin),
      }),
    overrides,
    { now: clock.now },
  );
}

for (const overrides of [{}, AUTH] as Partial<Config>[]) {
  const mode = 'authJwtSecret' in overrides ? 'auth on' : 'auth off';
  eachEngine(`a subject's rooms (${mode})`, (engine) => {
    it('every room of the subject with role, lastMessage, lastRead, unread', async () => {
      await withWorld(engine, overrides, async ({ clock, as }) => {
        const ada = await as('ada');
        const bob = await as('bob');
        const quiet = await ada.putRoom('quiet', { topic: 'nothing here', visibility: 'private' });
        clock.advance();
        const first = await ada.post('busy', 'one');
        clock.advance();
        await ada.putMember('busy', 'bob');
        clock.advance();
        const last = await bob.post('busy', 'two');
        const response = await ada.get(userRoomsPath('ada'));
        assert.equal(response.statusCode, 200, response.body);
        const rooms = response.json<UserRoom[]>();
        assert.deepEqual(
          rooms.map((r) => r.name),
          ['busy', 'quiet'].filter((n) => n !== 'quiet' || mode === 'auth on'),
        );
        const busy = rooms[0]!;
        const { role, lastMessage, lastRead, unread, ...room } = busy;
        assert.deepEqual(room, await ada.read<Room>(roomPath('busy')));
        assert.equal(role, 'owner');
        assert.deepEqual(lastMessage, { id: last.id, author: 'bob', createdAt: last.createdAt });
        assert.equal(lastRead, null);
        assert.equal(unread, 1, 'bob’s message; ada’s own is not unread');
        assert.notEqual(first.id, last.id);
        if (mode === 'auth on') {
          const quietEntry = rooms[1]!;
          assert.equal(quietEntry.lastMessage, null);
          assert.equal(quietEntry.topic, quiet.topic);
          assert.equal(quietEntry.visibility, 'private');
          assert.equal(quietEntry.role, 'owner');
          assert.equal(quietEntry.unread, 0);
        }
        const bobs = await bob.read<UserRoom[]>(userRoomsPath('bob'));
        assert.deepEqual(
          bobs.map((r) => [r.name, r.role, r.lastRead, r.unread]),
          [['busy', 'member', first.id, 0]],
          'bob joined when "one" was the newest message',
        );
      });
    });

    it('latest activity first: a newer room without messages beats an older message', async () => {
      await withWorld(engine, overrides, async ({ clock, as }) => {
        const ada = await as('ada');
        const join = async (name: string) => {
          if (mode === 'auth off') await ada.putMember(name, 'ada');
        };
        await ada.post('a-old', 'hello'); // t0: creates a-old (ada owns it with auth on or off)
        clock.advance();
        await ada.putRoom('b-new'); // t1
        await join('b-new');
        clock.advance();
        await ada.putRoom('c-revived'); // t2
        await join('c-revived');
        clock.advance();
        await ada.post('c-revived', 'back'); // t3
        clock.advance();
        await ada.post('a-old', 'again'); // t4
        const names = (await ada.read<UserRoom[]>(userRoomsPath('ada'))).map((r) => r.name);
        assert.deepEqual(names, ['a-old', 'c-revived', 'b-new']);
      });
    });

    it('ties by name (code point order)', async () => {
      await withWorld(engine, overrides, async ({ as }) => {
        const ada = await as('ada');
        // The clock does not move: every room has the same activity.
        for (const name of ['b', 'a', 'B', '_', 'A']) {
          await ada.putRoom(name);
          if (mode === 'auth off') await ada.putMember(name, 'ada');
        }
        const names = (await ada.read<UserRoom[]>(userRoomsPath('ada'))).map((r) => r.name);
        assert.deepEqual(names, ['A', 'B', '_', 'a', 'b']);
      });
    });

    it('lastMessage and activity follow deletes: the newest message left, then the room itself', async () => {
      await withWorld(engine, overrides, async ({ clock, as }) => {
        const ada = await as('ada');
        const first = await ada.post('fading', 'one'); // t0
        clock.advance();
        await ada.putRoom('steady'); // t1
        if (mode === 'auth off') await ada.putMember('steady', 'ada');
        clock.advance();
        const second = await ada.post('fading', 'two'); // t2
        const names = async () =>
          (await ada.read<UserRoom[]>(userRoomsPath('ada'))).map((r) => [
            r.name,
            r.lastMessage?.id ?? null,
          ]);
        assert.deepEqual(await names(), [
          ['fading', second.id],
          ['steady', null],
        ]);
        assert.equal((await ada.delete(`/api/messages/${second.id}`)).statusCode, 200);
        assert.deepEqual(await names(), [
          ['steady', null],
          ['fading', first.id],
        ]);
        assert.equal((await ada.delete(`/api/messages/${first.id}`)).statusCode, 200);
        // No message left: activity is the room's createdAt (t0), before steady's (t1).
        assert.deepEqual(await names(), [
          ['steady', null],
          ['fading', null],
        ]);
      });
    });

    it('limit cuts the list to the most active; bad limits are a 400', async () => {
      await withWorld(engine, overrides, async ({ clock, as }) => {
        const ada = await as('ada');
        for (const name of ['r1', 'r2', 'r3', 'r4']) {
          await ada.post(name, name);
          clock.advance();
        }
        const two = await ada.read<UserRoom[]>(`${userRoomsPath('ada')}?limit=2`);
        assert.deepEqual(
          two.map((r) => r.name),
          ['r4', 'r3'],
        );
        assert.equal((await ada.read<UserRoom[]>(userRoomsPath('ada'))).length, 4);
        for (const query of ['limit=0', 'limit=1001', 'limit=two', 'limit=1&limit=2']) {
          const problem = assertProblem(await ada.get(`${userRoomsPath('ada')}?${query}`), 400);
          assert.equal(onlyError(problem).parameter, 'limit');
        }
      });
    });

    it('a subject in no room gets []; a room left is no longer listed', async () => {
      await withWorld(engine, overrides, async ({ as }) => {
        const ada = await as('ada');
        const bob = await as('bob');
        assert.deepEqual(await bob.read(userRoomsPath('bob')), []);
        await ada.post('shared', 'hi');
        await bob.putMember('shared', 'bob');
        assert.equal((await bob.read<UserRoom[]>(userRoomsPath('bob'))).length, 1);
        assert.equal((await bob.delete(memberPath('shared', 'bob'))).statusCode, 200);
        assert.deepEqual(await bob.read(userRoomsPath('bob')), []);
      });
    });

    it('a list after a list shows what changed between them: the room, the role, the other member’s marker leaves it be', async () => {
      await withWorld(engine, overrides, async ({ as }) => {
        const ada = await as('ada');
        const bob = await as('bob');
        await ada.putRoom('plans', { topic: 'before' });
        const first = await ada.post('plans', 'hi');
        await ada.putMember('plans', 'bob');
        const [before] = await bob.read<UserRoom[]>(userRoomsPath('bob'));
        assert.equal(before?.role, 'member');
        // Another subject's marker is not bob's: his entry stays as it was.
        await ada.setMarker('plans', first.id);
        assert.deepEqual(await bob.read<UserRoom[]>(userRoomsPath('bob')), [before]);
        const topic = await ada.put(roomPath('plans'), { topic: 'after' });
        assert.equal(topic.statusCode, 200, topic.body);
        const [renamed] = await bob.read<UserRoom[]>(userRoomsPath('bob'));
        assert.equal(renamed?.topic, 'after');
        assert.equal(renamed?.version, topic.json<Room>().version);
        await ada.putMember('plans', 'bob', { role: 'owner' });
        const [promoted] = await bob.read<UserRoom[]>(userRoomsPath('bob'));
        assert.equal(promoted?.role, 'owner');
        assert.equal(promoted?.topic, 'after');
      });
    });

    it('lastRead and unread follow the marker; unread stops at 100', async () => {
      await withWorld(engine, overrides, async ({ as }) => {
        const ada = await as('ada');
        const bob = await as('bob');
        await bob.post('talk', 'bob first');
        const m = await ada.post('talk', 'ada 0');
        for (let i = 1; i < 101; i++) await ada.post('talk', `ada ${i}`);
        const [entry] = await bob.read<UserRoom[]>(userRoomsPath('bob'));
        assert.equal(entry?.unread, 100);
        await bob.setMarker('talk', m.id);
        const [after] = await bob.read<UserRoom[]>(userRoomsPath('bob'));
        assert.equal(after?.lastRead, m.id);
        assert.equal(after?.unread, 100);
      });
    });

    it('a malformed subject in the path is a 400', async () => {
      await withWorld(engine, overrides, async ({ as }) => {
        const root = await as('root', true);
        const astral = encodeURIComponent('😀'.repeat(65));
        for (const subject of ['%20', 'a%07', 'x'.repeat(65), astral]) {
          assertProblem(await root.get(`/api/users/${subject}/rooms`), 400, 'validation');
        }
      });
    });
  });
}

eachEngine(
  "a subject's rooms: whose (auth on)",
  (_engine, shared) => {
    const as = (sub: string, admin = false) => callerFor(shared(), true, sub, admin);

    it('another subject’s list is a 403; an admin may read it', async () => {
      const ada = await as('ada-list');
      const bob = await as('bob-list');
      const root = await as('root', true);
      await ada.post('ada-list-room', 'hi');
      assertProblem(await bob.get(userRoomsPath('ada-list')), 403);
      const seen = await root.read<UserRoom[]>(userRoomsPath('ada-list'));
      assert.deepEqual(
        seen.map((r) => r.name),
        ['ada-list-room'],
      );
      assert.deepEqual(seen, await ada.read<UserRoom[]>(userRoomsPath('ada-list')));
    });

    it('a private room the subject left is no longer listed', async () => {
      const ada = await as('ada-p');
      const bob = await as('bob-p');
      await ada.putRoom('private-p', { visibility: 'private' });
      await ada.putMember('private-p', 'bob-p');
      assert.equal((await bob.read<UserRoom[]>(userRoomsPath('bob-p'))).length, 1);
      await ada.delete(memberPath('private-p', 'bob-p'));
      assert.deepEqual(await bob.read(userRoomsPath('bob-p')), []);
    });
  },
  AUTH,
);
