/**
 * /api/rooms/{name}/members through HTTP on every engine: add, change, re-send
 * and remove; join and leave a public room; who may (403), the last owner
 * (409), 404 for no membership, the fields as read, the subject rules in the
 * path, and the list by subject in code point order with paging.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Membership } from '../../src/domain/room.ts';
import { AUTH } from '../auth/tokens.ts';
import {
  UTC_MS,
  assertProblem,
  eachEngine,
  onlyError,
  uniqueRoom,
  withApp,
} from '../http/http-contract.ts';
import {
  byCodePoint,
  callerFor,
  eventSeqOf,
  memberPath,
  membersPath,
  roomPath,
  walkPages,
} from './rooms-support.ts';

eachEngine(
  'members (auth on)',
  (_engine, shared) => {
    const as = (sub: string, admin = false) => callerFor(shared(), true, sub, admin);

    /** A room owned by ada (private when asked). */
    async function room(visibility: 'public' | 'private' = 'public'): Promise<string> {
      const name = uniqueRoom();
      await (await as('ada')).putRoom(name, { visibility });
      return name;
    }

    it('an owner adds a member: 201, role member, the membership; GET answers it', async () => {
      const ada = await as('ada');
      const name = await room('private');
      const response = await ada.put(memberPath(name, 'bob'), {});
      assert.equal(response.statusCode, 201, response.body);
      const membership = response.json<Membership>();
      assert.deepEqual(Object.keys(membership).sort(), ['joinedAt', 'role', 'room', 'subject']);
      assert.equal(membership.room, name);
      assert.equal(membership.subject, 'bob');
      assert.equal(membership.role, 'member');
      assert.match(membership.joinedAt, UTC_MS);
      assert.deepEqual(await ada.read(memberPath(name, 'bob')), membership);
      assert.deepEqual(await (await as('bob')).read(memberPath(name, 'bob')), membership);
    });

    it('an owner adds with a role, and changes a role (200); a role left out keeps its value', async () => {
      const ada = await as('ada');
      const name = await room();
      const added = await ada.put(memberPath(name, 'bob'), { role: 'owner' });
      assert.equal(added.statusCode, 201);
      assert.equal(added.json<Membership>().role, 'owner');
      const kept = await ada.put(memberPath(name, 'bob'), {});
      assert.equal(kept.statusCode, 200);
      assert.deepEqual(kept.json(), added.json());
      const demoted = await ada.put(memberPath(name, 'bob'), { role: 'member' });
      assert.equal(demoted.statusCode, 200, demoted.body);
      assert.equal(demoted.json<Membership>().role, 'member');
      assert.equal(demoted.json<Membership>().joinedAt, added.json<Membership>().joinedAt);
      const noBody = await ada.put(memberPath(name, 'bob'));
      assert.equal(noBody.statusCode, 200, noBody.body);
      assert.equal(noBody.json<Membership>().role, 'member');
    });

    it('the membership as read may be sent back; fields that differ are a 400 naming them', async () => {
      const ada = await as('ada');
      const name = await room();
      const membership = await ada.putMember(name, 'bob');
      const back = await ada.put(memberPath(name, 'bob'), { ...membership, role: 'owner' });
      assert.equal(back.statusCode, 200, back.body);
      assert.equal(back.json<Membership>().role, 'owner');
      for (const [field, value] of [
        ['room', 'another'],
        ['subject', 'carol'],
        ['joinedAt', '2001-01-01T00:00:00.000Z'],
      ] as const) {
        const response = await ada.put(memberPath(name, 'bob'), { ...membership, [field]: value });
        const problem = assertProblem(response, 400, 'fixed-field');
        assert.equal(onlyError(problem).pointer, `#/${field}`);
      }
      for (const [body, pointer] of [
        [{ role: 'admin' }, '#/role'],
        [{ role: null }, '#/role'],
        [{ colour: 'red' }, '#/colour'],
      ] as const) {
        const problem = assertProblem(
          await ada.put(memberPath(name, 'bob'), body),
          400,
          'validation',
        );
        assert.equal(onlyError(problem).pointer, pointer);
      }
    });

    it('an owner removes a member: 200, the membership as it was; then 404', async () => {
      const ada = await as('ada');
      const name = await room();
      const membership = await ada.putMember(name, 'bob', { role: 'owner' });
      const removed = await ada.delete(memberPath(name, 'bob'));
      assert.equal(removed.statusCode, 200, removed.body);
      assert.deepEqual(removed.json(), membership);
      assertProblem(await ada.get(memberPath(name, 'bob')), 404);
      assertProblem(await ada.delete(memberPath(name, 'bob')), 404);
    });

    it('anyone joins a public room as a member (201) and leaves it (200)', async () => {
      const carol = await as('carol');
      const name = await room('public');
      const joined = await carol.put(memberPath(name, 'carol'), {});
      assert.equal(joined.statusCode, 201, joined.body);
      assert.equal(joined.json<Membership>().role, 'member');
      const explicit = await carol.put(memberPath(name, 'carol'), { role: 'member' });
      assert.equal(explicit.statusCode, 200, 're-sending its own unchanged membership');
      const left = await carol.delete(memberPath(name, 'carol'));
      assert.equal(left.statusCode, 200, left.body);
      assert.deepEqual(left.json(), joined.json());
      assertProblem(await carol.get(memberPath(name, 'carol')), 404);
      const again = await carol.put(memberPath(name, 'carol'));
      assert.equal(again.statusCode, 201, 'joins again');
    });

    it('joining as owner, joining a private room, or adding others without the right is a 403', async () => {
      const bob = await as('bob');
      const carol = await as('carol');
      const open = await room('public');
      const closed = await room('private');
      assertProblem(await carol.put(memberPath(open, 'carol'), { role: 'owner' }), 403);
      assertProblem(await carol.put(memberPath(closed, 'carol'), {}), 403);
      assertProblem(await carol.put(memberPath(open, 'dave'), {}), 403);
      await (await as('ada')).putMember(open, 'bob');
      assertProblem(await bob.put(memberPath(open, 'dave'), {}), 403, undefined);
      assertProblem(await bob.put(memberPath(open, 'bob'), { role: 'owner' }), 403);
      assertProblem(await bob.put(memberPath(open, 'ada'), { role: 'member' }), 403);
      assertProblem(await carol.get(memberPath(open, 'carol')), 404);
      assertProblem(await carol.get(memberPath(open, 'dave')), 404);
    });

    it('a member of a private room re-sends its own unchanged membership (200), changes nothing else', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const name = await room('private');
      const membership = await ada.putMember(name, 'bob');
      const same = await bob.put(memberPath(name, 'bob'), { ...membership });
      assert.equal(same.statusCode, 200, same.body);
      assert.deepEqual(same.json(), membership);
      assertProblem(await bob.put(memberPath(name, 'bob'), { role: 'owner' }), 403);
      assertProblem(await bob.put(memberPath(name, 'carol'), {}), 403);
    });

    it('a member removes only itself; owners and admins remove anyone', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const root = await as('root', true);
      const name = await room('private');
      await ada.putMember(name, 'bob');
      await ada.putMember(name, 'carol');
      await ada.putMember(name, 'dave');
      assertProblem(await bob.delete(memberPath(name, 'carol')), 403);
      assert.equal((await ada.delete(memberPath(name, 'carol'))).statusCode, 200);
      assert.equal((await root.delete(memberPath(name, 'dave'))).statusCode, 200);
      assert.equal((await bob.delete(memberPath(name, 'bob'))).statusCode, 200);
      const left = await ada.read<Membership[]>(membersPath(name));
      assert.deepEqual(
        left.map((m) => m.subject),
        ['ada'],
      );
    });

    it('an admin adds anyone and sets roles, also in a private room it is not in', async () => {
      const root = await as('root', true);
      const name = await room('private');
      const added = await root.put(memberPath(name, 'bob'), { role: 'owner' });
      assert.equal(added.statusCode, 201, added.body);
      const changed = await root.put(memberPath(name, 'ada'), { role: 'member' });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.json<Membership>().role, 'member');
      assertProblem(await root.get(memberPath(name, 'root')), 404);
    });

    it('removing or demoting the last owner is a 409; with two owners each step works once', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const root = await as('root', true);
      const name = await room();
      assertProblem(await ada.delete(memberPath(name, 'ada')), 409);
      assertProblem(await ada.put(memberPath(name, 'ada'), { role: 'member' }), 409);
      assertProblem(await root.delete(memberPath(name, 'ada')), 409);
      assertProblem(await root.put(memberPath(name, 'ada'), { role: 'member' }), 409);
      await ada.putMember(name, 'bob', { role: 'owner' });
      const demoted = await bob.put(memberPath(name, 'ada'), { role: 'member' });
      assert.equal(demoted.statusCode, 200, demoted.body);
      assertProblem(await bob.delete(memberPath(name, 'bob')), 409);
      assertProblem(await bob.put(memberPath(name, 'bob'), { role: 'member' }), 409);
      assert.equal((await bob.delete(memberPath(name, 'ada'))).statusCode, 200);
      assert.equal((await ada.read<Membership>(memberPath(name, 'bob'))).role, 'owner');
    });

    it('a room with no owner (general) takes members without a last-owner rule', async () => {
      const root = await as('root', true);
      const carol = await as(`carol-${uniqueRoom()}`);
      const joined = await carol.put(memberPath('general', carol.sub));
      assert.equal(joined.statusCode, 201, joined.body);
      assert.equal((await carol.delete(memberPath('general', carol.sub))).statusCode, 200);
      const owner = await root.put(memberPath('general', carol.sub), { role: 'owner' });
      assert.equal(owner.statusCode, 201, owner.body);
      // Now it has one: the last owner rule applies.
      assertProblem(await carol.delete(memberPath('general', carol.sub)), 409);
      await root.putMember('general', `${carol.sub}-2`, { role: 'owner' });
      assert.equal((await carol.delete(memberPath('general', carol.sub))).statusCode, 200);
    });

    it('precedence: 404 room, 403 private room, 404 membership, 403 not allowed, 400 fixed field, 409', async () => {
      const ada = await as('ada');
      const eve = await as('eve');
      const bob = await as('bob');
      const missing = uniqueRoom();
      assertProblem(await eve.get(memberPath(missing, 'eve')), 404);
      assertProblem(await eve.put(memberPath(missing, 'eve'), {}), 404);
      assertProblem(await eve.delete(memberPath(missing, 'eve')), 404);
      assertProblem(await eve.get(membersPath(missing)), 404);
      const closed = await room('private');
      assertProblem(await eve.get(memberPath(closed, 'nobody')), 403);
      assertProblem(await eve.delete(memberPath(closed, 'nobody')), 403);
      assertProblem(await eve.put(memberPath(closed, 'ada'), { room: 'other' }), 403);
      const open = await room('public');
      assertProblem(await eve.delete(memberPath(open, 'nobody')), 404);
      await ada.putMember(open, 'bob');
      assertProblem(await eve.delete(memberPath(open, 'bob')), 403);
      assertProblem(await bob.put(memberPath(open, 'bob'), { role: 'owner', room: 'x' }), 403);
      assertProblem(await ada.put(memberPath(open, 'ada'), { role: 'member', room: 'x' }), 400);
      // A malformed body is a 400 before everything else.
      assertProblem(await eve.put(memberPath(missing, 'eve'), { role: 'king' }), 400);
      assertProblem(await eve.put(memberPath(closed, 'eve'), { role: 'king' }), 400);
    });

    it('a malformed subject in the path is a 400', async () => {
      const ada = await as('ada');
      const name = await room();
      // 65 astral code points: 130 UTF-16 units, past what a legal subject can be, still a 400.
      const astral = encodeURIComponent('😀'.repeat(65));
      for (const subject of ['%20', '%20%09', 'a%01b', 'x'.repeat(65), '%C2%85', astral]) {
        for (const method of ['GET', 'PUT', 'DELETE'] as const) {
          const response = await ada.request(
            method,
            `${membersPath(name)}/${subject}`,
            method === 'PUT' ? {} : undefined,
          );
          assertProblem(response, 400, 'validation');
        }
      }
      assert.equal((await ada.put(memberPath(name, 'ada lovelace'))).statusCode, 201);
    });

    it('a subject of 64 astral code points (128 UTF-16 units) is addressable on every path', async () => {
      const ada = await as('ada');
      const name = await room();
      const long = '😀'.repeat(64);
      const added = await ada.put(memberPath(name, long));
      assert.equal(added.statusCode, 201, added.body);
      assert.equal((await ada.read<Membership>(memberPath(name, long))).subject, long);
      const owner = await as(long);
      assert.equal(
        (await owner.get(`${roomPath(name)}/read-markers/${encodeURIComponent(long)}`)).statusCode,
        200,
      );
      assert.equal(
        (await owner.get(`/api/users/${encodeURIComponent(long)}/rooms`)).statusCode,
        200,
      );
      assert.equal((await ada.delete(memberPath(name, long))).statusCode, 200);
    });

    it('members of a public room are readable by anyone signed in', async () => {
      const eve = await as('eve');
      const name = await room();
      const listed = await eve.read<Membership[]>(membersPath(name));
      assert.deepEqual(
        listed.map((m) => [m.subject, m.role]),
        [['ada', 'owner']],
      );
      assert.equal((await eve.read<Membership>(memberPath(name, 'ada'))).role, 'owner');
    });
  },
  AUTH,
);

eachEngine('members (auth off)', (engine, shared) => {
  const as = (sub: string) => callerFor(shared(), false, sub);

  it('anyone manages any membership; the last owner rule still holds', async () => {
    const anyone = await as('anyone');
    const name = uniqueRoom();
    await anyone.putRoom(name, { visibility: 'private' });
    assert.deepEqual(await anyone.read(membersPath(name)), [], 'PUT with auth off makes no owner');
    assert.equal((await anyone.put(memberPath(name, 'ada'), { role: 'owner' })).statusCode, 201);
    assert.equal((await anyone.put(memberPath(name, 'bob'))).statusCode, 201);
    assert.equal((await anyone.delete(memberPath(name, 'bob'))).statusCode, 200);
    assertProblem(await anyone.delete(memberPath(name, 'ada')), 409);
    assertProblem(await anyone.put(memberPath(name, 'ada'), { role: 'member' }), 409);
  });

  it('lists memberships by subject in code point order, with limit, after and Link', async () => {
    await withApp(engine, async (app) => {
      const anyone = await callerFor(app, false, 'anyone');
      const name = 'people';
      await anyone.putRoom(name);
      const subjects = ['b', 'B', 'a', 'A', 'a b', 'ä', 'Z', '_', '😀', '\uFF5E', 'ada', 'ab'];
      for (const subject of subjects) await anyone.putMember(name, subject);
      const expected = byCodePoint(subjects);
      // U+FF5E sorts before U+1F600 by code point, after it by UTF-16 code unit.
      assert.ok(expected.indexOf('\uFF5E') < expected.indexOf('😀'));
      const all = await anyone.get(membersPath(name));
      assert.equal(all.statusCode, 200);
      assert.deepEqual(
        all.json<Membership[]>().map((m) => m.subject),
        expected,
      );
      eventSeqOf(all);
      for (const limit of [1, 3, subjects.length]) {
        const walked = await walkPages<Membership>(anyone, `${membersPath(name)}?limit=${limit}`);
        assert.deepEqual(
          walked.items.map((m) => m.subject),
          expected,
          `limit=${limit}`,
        );
        assert.equal(walked.pages, Math.ceil(subjects.length / limit));
      }
      const after = await anyone.read<Membership[]>(
        `${membersPath(name)}?after=${encodeURIComponent('a')}`,
      );
      assert.deepEqual(
        after.map((m) => m.subject),
        expected.slice(expected.indexOf('a') + 1),
      );
      for (const query of ['limit=0', 'limit=1001', 'limit=x', 'limit=1&limit=2', 'after=%20']) {
        assertProblem(await anyone.get(`${membersPath(name)}?${query}`), 400, 'validation');
      }
    });
  });

  it('a room with no members lists []; a room that does not exist is a 404', async () => {
    const anyone = await as('anyone');
    const name = uniqueRoom();
    await anyone.putRoom(name);
    assert.deepEqual(await anyone.read(membersPath(name)), []);
    assertProblem(await anyone.get(membersPath(uniqueRoom())), 404);
    assertProblem(await anyone.get(roomPath(uniqueRoom())), 404);
  });
});
