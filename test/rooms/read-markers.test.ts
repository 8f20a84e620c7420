/**
 * /api/rooms/{name}/read-markers/{subject} through HTTP on every engine:
 * never set (version 0), forward only without If-Match, set as sent with it,
 * the 400 of a lastRead that is not a message of the room, a marker whose
 * message is deleted later, unread (others' messages only, stops at 100), a
 * new member's marker, a marker that stays after leaving, and who may.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ReadMarker } from '../../src/domain/room.ts';
import { AUTH } from '../auth/tokens.ts';
import { assertProblem, eachEngine, onlyError, uniqueRoom } from '../http/http-contract.ts';
import { callerFor, etag, markerPath, memberPath } from './rooms-support.ts';

const MISSING = '01890a5d-ac96-774b-bcce-b302099a8057';

for (const auth of [true, false]) {
  eachEngine(
    `read markers (auth ${auth ? 'on' : 'off'})`,
    (_engine, shared) => {
      const as = (sub: string) => callerFor(shared(), auth, sub);

      it('a marker never set: lastRead null, version 0, unread counts others’ messages', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        await ada.post(name, 'one');
        await ada.post(name, 'two');
        await bob.post(name, 'mine');
        const response = await bob.get(markerPath(name, 'bob'));
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.headers.etag, '"0"');
        assert.deepEqual(response.json(), {
          room: name,
          subject: 'bob',
          lastRead: null,
          unread: 2,
          version: 0,
        });
      });

      it('PUT moves the marker: 200, ETag, version +1, unread after it', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        const m1 = await ada.post(name, 'one');
        await ada.post(name, 'two');
        await ada.post(name, 'three');
        const response = await bob.put(markerPath(name, 'bob'), { lastRead: m1.id });
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.headers.etag, '"1"');
        assert.deepEqual(response.json(), {
          room: name,
          subject: 'bob',
          lastRead: m1.id,
          unread: 2,
          version: 1,
        });
        assert.deepEqual(await bob.marker(name), response.json());
        assert.equal((await bob.get(markerPath(name, 'bob'))).headers.etag, '"1"');
      });

      it('without If-Match it only moves forward: an older id or the same one leaves it as it is', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        const m1 = await ada.post(name, 'one');
        const m2 = await ada.post(name, 'two');
        const m3 = await ada.post(name, 'three');
        const forward = await bob.setMarker(name, m2.id);
        const back = await bob.put(markerPath(name, 'bob'), { lastRead: m1.id });
        assert.equal(back.statusCode, 200, back.body);
        assert.deepEqual(back.json(), forward, 'unchanged');
        assert.equal(back.headers.etag, etag(forward.version));
        const same = await bob.setMarker(name, m2.id);
        assert.deepEqual(same, forward);
        const further = await bob.setMarker(name, m3.id.toUpperCase());
        assert.equal(further.lastRead, m3.id, 'matched case-insensitively, answered lowercase');
        assert.equal(further.version, forward.version + 1);
        assert.equal(further.unread, 0);
      });

      it('with If-Match it is set as sent, backwards too (mark as unread); a stale ETag is a 412', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        const m1 = await ada.post(name, 'one');
        const m2 = await ada.post(name, 'two');
        const set = await bob.setMarker(name, m2.id);
        const stale = await bob.put(
          markerPath(name, 'bob'),
          { lastRead: m1.id },
          { 'if-match': etag(set.version - 1) },
        );
        assertProblem(stale, 412);
        const back = await bob.put(
          markerPath(name, 'bob'),
          { lastRead: m1.id },
          { 'if-match': etag(set.version) },
        );
        assert.equal(back.statusCode, 200, back.body);
        assert.equal(back.json<ReadMarker>().lastRead, m1.id);
        assert.equal(back.json<ReadMarker>().unread, 1);
        assert.equal(back.json<ReadMarker>().version, set.version + 1);
        assert.equal(back.headers.etag, etag(set.version + 1));
        const star = await bob.put(
          markerPath(name, 'bob'),
          { lastRead: m2.id },
          { 'if-match': '*' },
        );
        assert.equal(star.statusCode, 200, star.body);
        assert.equal(star.json<ReadMarker>().lastRead, m2.id);
      });

      it('lastRead that is not a message of this room is a 400 with pointer #/lastRead', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        await ada.post(name, 'here');
        const elsewhere = await ada.post(uniqueRoom(), 'elsewhere');
        const deleted = await ada.post(name, 'gone');
        assert.equal((await ada.delete(`/api/messages/${deleted.id}`)).statusCode, 200);
        for (const lastRead of [elsewhere.id, MISSING, deleted.id, 'not-an-id', '']) {
          const response = await bob.put(markerPath(name, 'bob'), { lastRead });
          const problem = assertProblem(response, 400, 'validation');
          assert.equal(onlyError(problem).pointer, '#/lastRead', lastRead);
        }
        for (const body of [{}, { lastRead: null }]) {
          const problem = assertProblem(await bob.put(markerPath(name, 'bob'), body), 400);
          assert.equal(onlyError(problem).pointer, '#/lastRead');
        }
        assert.equal((await bob.marker(name)).version, 0, 'nothing was set');
      });

      it('a marker whose message is deleted later still works', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        await ada.post(name, 'one');
        const m2 = await ada.post(name, 'two');
        await ada.post(name, 'three');
        const set = await bob.setMarker(name, m2.id);
        assert.equal((await ada.delete(`/api/messages/${m2.id}`)).statusCode, 200);
        const after = await bob.marker(name);
        assert.equal(after.lastRead, m2.id);
        assert.equal(after.version, set.version);
        assert.equal(after.unread, 1);
        const m4 = await ada.post(name, 'four');
        const moved = await bob.setMarker(name, m4.id);
        assert.equal(moved.lastRead, m4.id);
        assert.equal(moved.unread, 0);
      });

      it('unread counts only others’ messages after lastRead, and stops at 100', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        const first = await bob.post(name, 'bob first');
        for (let i = 0; i < 3; i++) await bob.post(name, `bob ${i}`);
        assert.equal(
          (await bob.setMarker(name, first.id)).unread,
          0,
          'own messages are not unread',
        );
        for (let i = 0; i < 99; i++) await ada.post(name, `ada ${i}`);
        assert.equal((await bob.marker(name)).unread, 99);
        await ada.post(name, 'the hundredth');
        assert.equal((await bob.marker(name)).unread, 100);
        await ada.post(name, 'the hundred and first');
        await ada.post(name, 'the hundred and second');
        assert.equal((await bob.marker(name)).unread, 100, '100 means 100 or more');
        assert.equal((await ada.marker(name)).unread, 4, 'bob’s four, for ada');
      });

      it('a deleted message is no longer unread', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        const m1 = await ada.post(name, 'one');
        const m2 = await ada.post(name, 'two');
        await bob.setMarker(name, m1.id);
        assert.equal((await bob.marker(name)).unread, 1);
        await ada.delete(`/api/messages/${m2.id}`);
        assert.equal((await bob.marker(name)).unread, 0);
      });

      it('a new member’s marker starts at the room’s newest message', async () => {
        const ada = await as('ada');
        const name = uniqueRoom();
        await ada.putRoom(name);
        await ada.post(name, 'one');
        const newest = await ada.post(name, 'two');
        const joined = await ada.put(memberPath(name, 'carol'));
        assert.equal(joined.statusCode, 201, joined.body);
        const carol = await as('carol');
        const marker = await carol.marker(name);
        assert.equal(marker.lastRead, newest.id);
        assert.equal(marker.unread, 0);
        await ada.post(name, 'three');
        assert.equal((await carol.marker(name)).unread, 1);
      });

      it('a new member of a room with no messages keeps lastRead null', async () => {
        const ada = await as('ada');
        const name = uniqueRoom();
        await ada.putRoom(name);
        await ada.putMember(name, 'dave');
        const marker = await (await as('dave')).marker(name);
        assert.equal(marker.lastRead, null);
        assert.equal(marker.unread, 0);
      });

      it('the marker stays when its subject leaves the room (and comes back)', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        await ada.post(name, 'one');
        const m2 = await ada.post(name, 'two');
        await bob.putMember(name, 'bob');
        await ada.post(name, 'three');
        const set = await bob.setMarker(name, m2.id);
        assert.equal((await bob.delete(memberPath(name, 'bob'))).statusCode, 200);
        assert.deepEqual(await bob.marker(name), set);
      });

      it('room and subject in the body must match (400); unread is ignored; a stale version is a 409', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        const m1 = await ada.post(name, 'one');
        const m2 = await ada.post(name, 'two');
        for (const [field, value] of [
          ['room', 'elsewhere'],
          ['subject', 'carol'],
        ] as const) {
          const response = await bob.put(markerPath(name, 'bob'), {
            lastRead: m1.id,
            [field]: value,
          });
          assert.equal(onlyError(assertProblem(response, 400)).pointer, `#/${field}`);
        }
        const read = await bob.marker(name);
        const ignored = await bob.put(markerPath(name, 'bob'), {
          ...read,
          lastRead: m1.id,
          unread: 42,
        });
        assert.equal(ignored.statusCode, 200, ignored.body);
        assert.equal(ignored.json<ReadMarker>().unread, 1);
        assert.equal(ignored.json<ReadMarker>().version, 1);
        const stale = await bob.put(markerPath(name, 'bob'), { lastRead: m2.id, version: 0 });
        assertProblem(stale, 409);
        const unknown = await bob.put(markerPath(name, 'bob'), { lastRead: m2.id, colour: 'red' });
        assert.equal(onlyError(assertProblem(unknown, 400)).pointer, '#/colour');
      });

      it('a room that does not exist is a 404; a malformed subject a 400', async () => {
        const bob = await as('bob');
        assertProblem(await bob.get(markerPath(uniqueRoom(), 'bob')), 404);
        assertProblem(await bob.put(markerPath(uniqueRoom(), 'bob'), { lastRead: MISSING }), 404);
        const name = uniqueRoom();
        await bob.post(name, 'x');
        assertProblem(await bob.get(`/api/rooms/${name}/read-markers/%20`), 400, 'validation');
        assertProblem(await bob.get(`/api/rooms/${name}/read-markers/a%00`), 400, 'validation');
      });
    },
    auth ? AUTH : {},
  );
}

eachEngine(
  'read markers: whose (auth on)',
  (_engine, shared) => {
    const as = (sub: string, admin = false) => callerFor(shared(), true, sub, admin);

    it('a marker is its subject’s own: others get a 403, admins may read but not set it', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const root = await as('root', true);
      const name = uniqueRoom();
      const m1 = await ada.post(name, 'one');
      await ada.putMember(name, 'bob', { role: 'owner' });
      const set = await bob.setMarker(name, m1.id);
      assertProblem(await ada.get(markerPath(name, 'bob')), 403, undefined);
      assertProblem(await ada.put(markerPath(name, 'bob'), { lastRead: m1.id }), 403);
      assert.deepEqual(await root.read(markerPath(name, 'bob')), set);
      assertProblem(await root.put(markerPath(name, 'bob'), { lastRead: m1.id }), 403);
    });

    it('a private room: a non-member gets a 403 for any marker; a former member’s marker stays', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const root = await as('root', true);
      const name = uniqueRoom();
      await ada.putRoom(name, { visibility: 'private' });
      const m1 = await ada.post(name, 'one');
      await ada.putMember(name, 'bob');
      await ada.post(name, 'two');
      const set = await bob.setMarker(name, m1.id);
      assert.equal((await bob.delete(memberPath(name, 'bob'))).statusCode, 200);
      assertProblem(await bob.get(markerPath(name, 'bob')), 403);
      assertProblem(await bob.put(markerPath(name, 'bob'), { lastRead: m1.id }), 403);
      const kept = await root.read<ReadMarker>(markerPath(name, 'bob'));
      assert.equal(kept.lastRead, set.lastRead);
      assert.equal(kept.version, set.version);
      // 403 for the private room comes before the 400 of lastRead and the 403 of someone else's marker.
      const eve = await as('eve');
      assertProblem(await eve.put(markerPath(name, 'eve'), { lastRead: MISSING }), 403);
      assertProblem(await eve.get(markerPath(name, 'ada')), 403);
    });

    it('anyone who may read a public room has a marker there without being a member', async () => {
      const ada = await as('ada');
      const eve = await as('eve');
      const name = uniqueRoom();
      const m1 = await ada.post(name, 'one');
      await ada.post(name, 'two');
      const set = await eve.setMarker(name, m1.id);
      assert.equal(set.unread, 1);
      assertProblem(await eve.get(memberPath(name, 'eve')), 404, undefined);
    });

    it('precedence: 403 (someone else’s marker) before the 400 of a lastRead elsewhere', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const name = uniqueRoom();
      await ada.post(name, 'one');
      assertProblem(await bob.put(markerPath(name, 'ada'), { lastRead: MISSING }), 403);
    });
  },
  AUTH,
);
