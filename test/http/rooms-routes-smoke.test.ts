/**
 * Each room, membership, read-marker and user-room route is wired: its status
 * and the shape of its body (every response is also checked against the
 * document by the contract helper). The rules themselves are proved in test/rooms/.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Membership, ReadMarker, Room, UserRoom } from '../../src/domain/room.ts';
import { assertProblem, eachEngine, onlyError, uniqueRoom } from './http-contract.ts';

const JSON_BODY = { 'content-type': 'application/json' };

eachEngine('room routes are wired', (_engine, shared) => {
  it('PUT creates (201) then updates (200) a room, with ETag and Location', async () => {
    const { inject } = shared();
    const name = uniqueRoom();
    const created = await inject({ method: 'PUT', url: `/api/rooms/${name}` });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, `/api/rooms/${name}`);
    assert.equal(created.headers.etag, '"1"');
    const room = created.json() as Room;
    assert.deepEqual(
      { name: room.name, visibility: room.visibility, topic: room.topic, version: room.version },
      { name, visibility: 'public', topic: '', version: 1 },
    );

    const updated = await inject({
      method: 'PUT',
      url: `/api/rooms/${name}`,
      headers: { ...JSON_BODY, 'if-match': '"1"' },
      payload: { topic: 'hello' },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.headers.etag, '"2"');
    assert.equal((updated.json() as Room).topic, 'hello');

    const createOnly = await inject({
      method: 'PUT',
      url: `/api/rooms/${name}`,
      headers: { 'if-none-match': '*' },
    });
    assertProblem(createOnly, 412, 'precondition-failed');
  });

  it('GET a room: 200 with ETag, 304 for a matching If-None-Match; DELETE is a 405', async () => {
    const { inject } = shared();
    const name = uniqueRoom();
    await inject({ method: 'PUT', url: `/api/rooms/${name}` });
    const got = await inject({ url: `/api/rooms/${name}` });
    assert.equal(got.statusCode, 200);
    assert.equal(got.headers.etag, '"1"');
    assert.equal((got.json() as Room).name, name);

    const same = await inject({ url: `/api/rooms/${name}`, headers: { 'if-none-match': '"1"' } });
    assert.equal(same.statusCode, 304);

    const missing = await inject({ url: `/api/rooms/${uniqueRoom()}` });
    assertProblem(missing, 404, 'not-found');

    const deleted = await inject({ method: 'DELETE', url: `/api/rooms/${name}` });
    assertProblem(deleted, 405, 'method-not-allowed');
    const allowed = String(deleted.headers.allow).split(/,\s*/);
    assert.ok(allowed.includes('GET') && allowed.includes('PUT'), String(deleted.headers.allow));
    assert.ok(!allowed.includes('DELETE'));
  });

  it('GET /api/rooms pages with Link and Event-Seq, streams without limit, filters by visibility', async () => {
    const { inject } = shared();
    const prefix = uniqueRoom();
    for (const suffix of ['a', 'b']) {
      await inject({ method: 'PUT', url: `/api/rooms/${prefix}${suffix}` });
    }
    await inject({
      method: 'PUT',
      url: `/api/rooms/${prefix}c`,
      headers: JSON_BODY,
      payload: { visibility: 'private' },
    });

    const page = await inject({ url: `/api/rooms?limit=1&after=${prefix}` });
    assert.equal(page.statusCode, 200);
    assert.deepEqual(
      (page.json() as Room[]).map((r) => r.name),
      [`${prefix}a`],
    );
    assert.match(String(page.headers['event-seq']), /^\d+$/);
    assert.equal(page.headers.link, `</api/rooms?limit=1&after=${prefix}a>; rel="next"`);

    const all = await inject({ url: `/api/rooms?after=${prefix}` });
    assert.equal(all.statusCode, 200);
    assert.match(String(all.headers['event-seq']), /^\d+$/);
    const names = (all.json() as Room[]).map((r) => r.name);
    assert.deepEqual(
      names.filter((n) => n.startsWith(prefix)),
      [`${prefix}a`, `${prefix}b`, `${prefix}c`],
    );

    const privateOnes = await inject({ url: `/api/rooms?visibility=private&after=${prefix}` });
    assert.equal(privateOnes.statusCode, 200);
    const rooms = privateOnes.json() as Room[];
    assert.ok(rooms.some((r) => r.name === `${prefix}c`));
    assert.ok(rooms.every((r) => r.visibility === 'private'));
  });

  it('memberships: PUT adds (201) and changes (200), GET one and the list, DELETE answers the membership as it was', async () => {
    const { inject } = shared();
    const name = uniqueRoom();
    await inject({ method: 'PUT', url: `/api/rooms/${name}` });
    // No bytes with a JSON Content-Type is no body too.
    const added = await inject({
      method: 'PUT',
      url: `/api/rooms/${name}/members/bob`,
      headers: JSON_BODY,
    });
    assert.equal(added.statusCode, 201, added.body);
    const bob = added.json() as Membership;
    assert.deepEqual(
      { room: bob.room, subject: bob.subject, role: bob.role },
      { room: name, subject: 'bob', role: 'member' },
    );
    const owner = await inject({
      method: 'PUT',
      url: `/api/rooms/${name}/members/carol`,
      headers: JSON_BODY,
      payload: { role: 'owner' },
    });
    assert.equal(owner.statusCode, 201);
    assert.equal((owner.json() as Membership).role, 'owner');
    const resent = await inject({
      method: 'PUT',
      url: `/api/rooms/${name}/members/bob`,
      headers: JSON_BODY,
      payload: bob,
    });
    assert.equal(resent.statusCode, 200);
    assert.deepEqual(resent.json(), bob);

    const one = await inject({ url: `/api/rooms/${name}/members/bob` });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), bob);

    const page = await inject({ url: `/api/rooms/${name}/members?limit=1` });
    assert.equal(page.statusCode, 200);
    assert.deepEqual(
      (page.json() as Membership[]).map((m) => m.subject),
      ['bob'],
    );
    assert.equal(page.headers.link, `</api/rooms/${name}/members?limit=1&after=bob>; rel="next"`);
    assert.match(String(page.headers['event-seq']), /^\d+$/);
    const all = await inject({ url: `/api/rooms/${name}/members` });
    assert.equal(all.statusCode, 200);
    assert.deepEqual(
      (all.json() as Membership[]).map((m) => m.subject),
      ['bob', 'carol'],
    );

    const removed = await inject({ method: 'DELETE', url: `/api/rooms/${name}/members/bob` });
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), bob);
    assertProblem(await inject({ url: `/api/rooms/${name}/members/bob` }), 404, 'not-found');
  });

  it('read markers: GET and PUT with ETag; a stale If-Match is a 412', async () => {
    const { inject, create } = shared();
    const name = uniqueRoom();
    await inject({ method: 'PUT', url: `/api/rooms/${name}` });
    const message = await create({ room: name, author: 'bob' });

    const before = await inject({ url: `/api/rooms/${name}/read-markers/ada` });
    assert.equal(before.statusCode, 200, before.body);
    const marker = before.json() as ReadMarker;
    assert.equal(before.headers.etag, `"${marker.version}"`);
    assert.deepEqual(
      { room: marker.room, subject: marker.subject, lastRead: marker.lastRead },
      { room: name, subject: 'ada', lastRead: null },
    );

    const moved = await inject({
      method: 'PUT',
      url: `/api/rooms/${name}/read-markers/ada`,
      headers: JSON_BODY,
      payload: { lastRead: message.id },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    const after = moved.json() as ReadMarker;
    assert.deepEqual(
      { lastRead: after.lastRead, unread: after.unread },
      {
        lastRead: message.id,
        unread: 0,
      },
    );
    assert.equal(moved.headers.etag, `"${after.version}"`);

    const stale = await inject({
      method: 'PUT',
      url: `/api/rooms/${name}/read-markers/ada`,
      headers: { ...JSON_BODY, 'if-match': `"${marker.version}"` },
      payload: { lastRead: message.id },
    });
    assertProblem(stale, 412, 'precondition-failed');
  });

  it("GET /api/users/{subject}/rooms lists the subject's rooms with role and last message", async () => {
    const { inject, create } = shared();
    const name = uniqueRoom();
    const subject = `u-${name}`;
    await inject({ method: 'PUT', url: `/api/rooms/${name}` });
    await inject({ method: 'PUT', url: `/api/rooms/${name}/members/${subject}` });
    const message = await create({ room: name, author: 'bob' });

    const response = await inject({ url: `/api/users/${subject}/rooms?limit=10` });
    assert.equal(response.statusCode, 200, response.body);
    const [entry, ...rest] = response.json() as UserRoom[];
    assert.equal(rest.length, 0);
    assert.equal(entry?.name, name);
    assert.equal(entry?.role, 'member');
    assert.equal(entry?.lastMessage?.id, message.id);
    assert.equal(entry?.unread, 1);
  });

  it('a malformed room name or subject in the path is a 400 naming it', async () => {
    const { inject } = shared();
    for (const url of [
      '/api/rooms/no%20spaces',
      `/api/rooms/${'x'.repeat(65)}/members`,
      '/api/users/%20/rooms',
      `/api/rooms/${uniqueRoom()}/read-markers/%00`,
    ]) {
      const problem = assertProblem(await inject({ url }), 400, 'validation');
      assert.ok(onlyError(problem).pointer, `${url}: ${JSON.stringify(problem.errors)}`);
    }
  });
});
