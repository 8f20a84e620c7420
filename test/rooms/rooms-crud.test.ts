/**
 * /api/rooms and /api/rooms/{name} through HTTP on every engine: create and
 * update by PUT (defaults, fields left out, fixed fields, versions, If-Match,
 * If-None-Match), GET with 304, the name rules, DELETE 405, and the list (code
 * point order, paging, streaming, Event-Seq, the visibility filter).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { it } from 'node:test';
import type { Room } from '../../src/domain/room.ts';
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
  ManualClock,
  byCodePoint,
  callerFor,
  etag,
  eventSeqOf,
  memberPath,
  roomPath,
  walkPages,
  type Caller,
} from './rooms-support.ts';

eachEngine('rooms: create, read, update (auth off)', (engine, shared) => {
  const anyone = () => callerFor(shared(), false, 'ada');

  it('PUT creates a room with the defaults: 201, Location, ETag "1"', async () => {
    const name = uniqueRoom();
    const response = await (await anyone()).put(roomPath(name), {});
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(response.headers.location, `/api/rooms/${name}`);
    assert.equal(response.headers.etag, '"1"');
    const room = response.json<Room>();
    assert.deepEqual(Object.keys(room).sort(), [
      'createdAt',
      'createdBy',
      'name',
      'topic',
      'updatedAt',
      'version',
      'visibility',
    ]);
    assert.equal(room.name, name);
    assert.equal(room.visibility, 'public');
    assert.equal(room.topic, '');
    assert.equal(room.createdBy, null, 'created with auth off through PUT');
    assert.equal(room.version, 1);
    assert.match(room.createdAt, UTC_MS);
    assert.equal(room.updatedAt, room.createdAt);
    assert.match(String(response.headers['content-type']), /^application\/json; charset=utf-8/);
    assert.equal(response.headers['cache-control'], 'no-cache');
  });

  it('PUT with no body at all creates with the defaults, as {} does', async () => {
    const name = uniqueRoom();
    const response = await (await anyone()).put(roomPath(name));
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(response.json<Room>().visibility, 'public');
    assert.equal(response.json<Room>().topic, '');
  });

  it('PUT creates with the given visibility and topic; GET answers the same with its ETag', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const created = await caller.put(roomPath(name), { visibility: 'private', topic: 'plans ✨' });
    assert.equal(created.statusCode, 201, created.body);
    const room = created.json<Room>();
    assert.equal(room.visibility, 'private');
    assert.equal(room.topic, 'plans ✨');
    const got = await caller.get(roomPath(name));
    assert.equal(got.statusCode, 200);
    assert.equal(got.headers.etag, '"1"');
    assert.deepEqual(got.json(), room);
  });

  it('GET of a room that does not exist is a 404 problem', async () => {
    const response = await (await anyone()).get(roomPath(uniqueRoom()));
    assertProblem(response, 404);
  });

  it('PUT updates: 200, version +1, a field left out keeps its value', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const created = await caller.putRoom(name, { visibility: 'private', topic: 'one' });
    const response = await caller.put(roomPath(name), { topic: 'two' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers.etag, '"2"');
    assert.equal(response.headers.location, undefined);
    const updated = response.json<Room>();
    assert.equal(updated.topic, 'two');
    assert.equal(updated.visibility, 'private', 'left out: kept');
    assert.equal(updated.version, 2);
    assert.equal(updated.createdAt, created.createdAt);
    assert.equal(updated.createdBy, created.createdBy);
    assert.ok(updated.updatedAt >= created.updatedAt);
    const back = await caller.put(roomPath(name), { visibility: 'public' });
    assert.equal(back.json<Room>().topic, 'two', 'left out: kept');
    assert.equal(back.json<Room>().visibility, 'public');
    assert.equal(back.json<Room>().version, 3);
    // Defaults apply on creation only: an empty body changes nothing.
    const empty = await caller.put(roomPath(name), {});
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(empty.json(), back.json());
  });

  it('a PUT that changes nothing keeps version and updatedAt', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const room = await caller.putRoom(name, { topic: 'same' });
    const again = await caller.put(roomPath(name), { topic: 'same', visibility: 'public' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers.etag, '"1"');
    assert.deepEqual(again.json(), room);
  });

  it('the room as read may be sent back with a change (GET, change, PUT back)', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const room = await caller.putRoom(name);
    const response = await caller.put(roomPath(name), { ...room, topic: 'edited' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json<Room>().topic, 'edited');
    assert.equal(response.json<Room>().version, 2);
  });

  for (const [field, value] of [
    ['name', 'another-name'],
    ['createdBy', 'mallory'],
    ['createdAt', '2001-01-01T00:00:00.000Z'],
  ] as const) {
    it(`a ${field} that differs from the stored value is a 400 naming it`, async () => {
      const caller = await anyone();
      const name = uniqueRoom();
      const room = await caller.putRoom(name);
      const response = await caller.put(roomPath(name), { ...room, topic: 'x', [field]: value });
      const problem = assertProblem(response, 400, 'fixed-field');
      assert.equal(onlyError(problem).pointer, `#/${field}`);
      assert.deepEqual(await caller.read(roomPath(name)), room, 'unchanged');
    });
  }

  it('a name in the body that differs from the path is a 400 on create too', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const response = await caller.put(roomPath(name), { name: 'other' });
    assert.equal(onlyError(assertProblem(response, 400, 'fixed-field')).pointer, '#/name');
    assertProblem(await caller.get(roomPath(name)), 404);
  });

  it('a stale version or updatedAt is a 409; the current ones are accepted', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const v1 = await caller.putRoom(name, { topic: 'one' });
    const v2 = await caller.putRoom(name, { topic: 'two' });
    assertProblem(await caller.put(roomPath(name), { topic: 'three', version: v1.version }), 409);
    if (v1.updatedAt !== v2.updatedAt) {
      assertProblem(
        await caller.put(roomPath(name), { topic: 'three', updatedAt: v1.updatedAt }),
        409,
      );
    }
    const ok = await caller.put(roomPath(name), {
      topic: 'three',
      version: v2.version,
      updatedAt: v2.updatedAt,
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json<Room>().version, 3);
  });

  it('If-Match: a stale ETag is a 412, a current one, a list holding it or * updates', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    await caller.putRoom(name, { topic: 'one' });
    await caller.putRoom(name, { topic: 'two' });
    const stale = await caller.put(roomPath(name), { topic: 'x' }, { 'if-match': '"1"' });
    assertProblem(stale, 412);
    // If-Match compares strongly: a weak validator never matches.
    assertProblem(await caller.put(roomPath(name), { topic: 'x' }, { 'if-match': 'W/"2"' }), 412);
    const current = await caller.put(roomPath(name), { topic: 'three' }, { 'if-match': '"2"' });
    assert.equal(current.statusCode, 200, current.body);
    const list = await caller.put(roomPath(name), { topic: 'four' }, { 'if-match': '"1", "3"' });
    assert.equal(list.statusCode, 200, list.body);
    const star = await caller.put(roomPath(name), { topic: 'five' }, { 'if-match': '*' });
    assert.equal(star.statusCode, 200, star.body);
    assert.equal(star.json<Room>().version, 5);
  });

  it('If-Match on a room that does not exist is a 412 and creates nothing', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    assertProblem(await caller.put(roomPath(name), {}, { 'if-match': '*' }), 412);
    assertProblem(await caller.get(roomPath(name)), 404);
  });

  it('If-None-Match: * creates a new room and is a 412 for an existing one', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const created = await caller.put(roomPath(name), { topic: 'a' }, { 'if-none-match': '*' });
    assert.equal(created.statusCode, 201, created.body);
    const again = await caller.put(roomPath(name), { topic: 'b' }, { 'if-none-match': '*' });
    assertProblem(again, 412);
    assert.equal((await caller.read<Room>(roomPath(name))).topic, 'a');
  });

  it('precedence: 400 fixed field before 409 stale version before 412 If-Match', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    await caller.putRoom(name);
    await caller.putRoom(name, { topic: 'two' });
    const all = await caller.put(
      roomPath(name),
      { name: 'other', version: 1 },
      { 'if-match': '"1"' },
    );
    assertProblem(all, 400);
    assertProblem(await caller.put(roomPath(name), { version: 1 }, { 'if-match': '"1"' }), 409);
  });

  it('GET with a matching If-None-Match is a 304 (lists, *, weak comparison)', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    await caller.putRoom(name);
    for (const value of ['"1"', '"7", "1"', '*', 'W/"1"']) {
      const response = await caller.get(roomPath(name), { 'if-none-match': value });
      assert.equal(response.statusCode, 304, value);
      assert.equal(response.body, '');
      assert.equal(response.headers.etag, '"1"');
    }
    const other = await caller.get(roomPath(name), { 'if-none-match': '"2"' });
    assert.equal(other.statusCode, 200);
  });

  it('field rules: visibility, topic length and characters, unknown fields (400 naming each)', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    const cases: [Record<string, unknown>, string][] = [
      [{ visibility: 'secret' }, '#/visibility'],
      [{ visibility: null }, '#/visibility'],
      [{ topic: 'x'.repeat(257) }, '#/topic'],
      [{ topic: '😀'.repeat(257) }, '#/topic'],
      [{ topic: 'bell\u0007' }, '#/topic'],
      [{ topic: 'nul\u0000' }, '#/topic'],
      [{ topic: 'c1\u0085' }, '#/topic'],
      [{ topic: 7 }, '#/topic'],
      [{ colour: 'red' }, '#/colour'],
      [{ version: 0 }, '#/version'],
    ];
    for (const [body, pointer] of cases) {
      const response = await caller.put(roomPath(name), body);
      const problem = assertProblem(response, 400, 'validation');
      assert.equal(onlyError(problem).pointer, pointer, JSON.stringify(body));
    }
    assertProblem(await caller.get(roomPath(name)), 404, undefined);
    // 256 code points (astral ones count once), tabs and line ends are fine in a topic.
    const long = await caller.put(roomPath(name), { topic: '😀'.repeat(256) });
    assert.equal(long.statusCode, 201, long.body);
  });

  it('a body that is not a JSON object, or not JSON, is a 400; another Content-Type a 415', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    for (const payload of ['[]', '"x"', '{"topic":', 'null']) {
      const response = await caller.put(roomPath(name), payload, {
        'content-type': 'application/json',
      });
      assertProblem(response, 400);
    }
    const text = await caller.put(roomPath(name), 'topic=x', { 'content-type': 'text/plain' });
    assertProblem(text, 415);
    assertProblem(await caller.get(roomPath(name)), 404);
  });

  it('names: 1-64 of A-Z a-z 0-9 _ . -, case-sensitive', async () => {
    const caller = await anyone();
    const suffix = uniqueRoom().slice(2);
    for (const name of [
      `A.b-c_${suffix}`,
      `a.b-c_${suffix}`,
      'x'.repeat(62) + suffix.slice(0, 2),
    ]) {
      const response = await caller.put(roomPath(name), { topic: name });
      assert.equal(response.statusCode, 201, `${name}: ${response.body}`);
    }
    assert.equal((await caller.read<Room>(roomPath(`A.b-c_${suffix}`))).topic, `A.b-c_${suffix}`);
    assert.equal((await caller.read<Room>(roomPath(`a.b-c_${suffix}`))).topic, `a.b-c_${suffix}`);
  });

  it('a malformed name in the path is a 400 (too long, other characters, . and ..)', async () => {
    const caller = await anyone();
    for (const path of [
      `/api/rooms/${'x'.repeat(65)}`,
      '/api/rooms/a%20b',
      '/api/rooms/caf%C3%A9',
      '/api/rooms/a%2Fb',
      '/api/rooms/a%00',
    ]) {
      for (const method of ['GET', 'PUT'] as const) {
        const response = await caller.request(method, path, method === 'PUT' ? {} : undefined);
        assertProblem(response, 400, 'validation');
      }
    }
  });

  it('. and .. percent-encoded as a name or a subject are a 400: they cannot be addressed', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    await caller.putRoom(name);
    for (const dots of ['%2E', '%2E%2E', '%2e%2e']) {
      for (const [method, path] of [
        ['GET', `/api/rooms/${dots}`],
        ['PUT', `/api/rooms/${dots}`],
        ['GET', `/api/rooms/${dots}/members`],
        ['GET', `/api/rooms/${name}/members/${dots}`],
        ['PUT', `/api/rooms/${name}/members/${dots}`],
        ['DELETE', `/api/rooms/${name}/members/${dots}`],
        ['GET', `/api/rooms/${name}/read-markers/${dots}`],
        ['PUT', `/api/rooms/${name}/read-markers/${dots}`],
        ['GET', `/api/users/${dots}/rooms`],
      ] as const) {
        // On a socket, the path exactly as written: URL parsers (fetch's, inject's) would
        // resolve %2E and %2E%2E as dot segments before the request left.
        const response = await rawRequest(method, path, method === 'PUT' ? '{}' : undefined);
        assert.equal(response.statusCode, 400, `${method} ${path}: ${response.statusCode}`);
        assert.equal((JSON.parse(response.body) as { type: string }).type, '/problems/validation');
      }
    }
  });

  /** One request with its path sent verbatim. */
  async function rawRequest(method: string, path: string, body?: string) {
    const t = shared().t;
    if (t.url === '') await t.listen();
    return new Promise<{ statusCode: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        `${t.url}/`,
        { method, path, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, body: text }));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  it('DELETE /api/rooms/{name} is a 405 with Allow, and deletes nothing', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    await caller.putRoom(name);
    const response = await caller.delete(roomPath(name));
    assertProblem(response, 405);
    const allow = String(response.headers.allow).split(/,\s*/);
    assert.ok(allow.includes('GET') && allow.includes('PUT'), `Allow: ${allow.join(', ')}`);
    assert.ok(!allow.includes('DELETE'));
    assert.equal((await caller.get(roomPath(name))).statusCode, 200);
  });

  it('every response carries Cache-Control: no-cache, errors included', async () => {
    const caller = await anyone();
    const name = uniqueRoom();
    for (const response of [
      await caller.put(roomPath(name)),
      await caller.get(roomPath(name)),
      await caller.get(roomPath(uniqueRoom())),
      await caller.get('/api/rooms?limit=1'),
    ]) {
      assert.equal(response.headers['cache-control'], 'no-cache');
    }
  });
});

eachEngine(
  'rooms: who creates and updates (auth on)',
  (engine, shared) => {
    const as = (sub: string, admin = false) => callerFor(shared(), true, sub, admin);

    it('with auth on the creator is createdBy and becomes the owner', async () => {
      const ada = await as('ada ✨');
      const name = uniqueRoom();
      const room = await ada.putRoom(name, { visibility: 'private' });
      assert.equal(room.createdBy, 'ada ✨');
      const membership = await ada.read<{ role: string }>(memberPath(name, 'ada ✨'));
      assert.equal(membership.role, 'owner');
    });

    it('only owners and admins update a room (403 for members and others)', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const eve = await as('eve');
      const root = await as('root', true);
      const name = uniqueRoom();
      await ada.putRoom(name);
      await bob.putMember(name, 'bob');
      assertProblem(await bob.put(roomPath(name), { topic: 'bob was here' }), 403);
      assertProblem(await eve.put(roomPath(name), { topic: 'eve was here' }), 403);
      const byOwner = await ada.put(roomPath(name), { topic: 'by ada' });
      assert.equal(byOwner.statusCode, 200, byOwner.body);
      const byAdmin = await root.put(roomPath(name), { topic: 'by root' });
      assert.equal(byAdmin.statusCode, 200, byAdmin.body);
      assert.equal(byAdmin.json<Room>().version, 3);
      assert.equal(byAdmin.json<Room>().createdBy, 'ada', 'fixed');
    });

    it('a second owner may update too; an admin who creates a room owns it', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const root = await as('root', true);
      const name = uniqueRoom();
      await ada.putRoom(name);
      await ada.putMember(name, 'bob', { role: 'owner' });
      assert.equal((await bob.put(roomPath(name), { topic: 'bob' })).statusCode, 200);
      const other = uniqueRoom();
      const created = await root.put(roomPath(other), {});
      assert.equal(created.statusCode, 201);
      assert.equal(created.json<Room>().createdBy, 'root');
      assert.equal((await root.read<{ role: string }>(memberPath(other, 'root'))).role, 'owner');
    });

    it('a room with no owner (general, from the upgrade) is updated by admins only', async () => {
      const ada = await as('ada');
      const root = await as('root', true);
      const general = await ada.read<Room>(roomPath('general'));
      assert.equal(general.visibility, 'public');
      assert.equal(general.createdBy, null);
      assertProblem(await ada.put(roomPath('general'), { topic: 'mine' }), 403);
      const byAdmin = await root.put(roomPath('general'), { topic: `welcome ${uniqueRoom()}` });
      assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    });

    it('precedence: 403 (may not update) before a fixed field, a stale version or If-Match', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const name = uniqueRoom();
      await ada.putRoom(name);
      const response = await bob.put(
        roomPath(name),
        { topic: 'x', createdBy: 'bob', version: 9 },
        { 'if-match': '"9"' },
      );
      assertProblem(response, 403);
    });

    it('If-None-Match: * on an existing room: 403 for a non-owner (403 comes before 412), 412 for the owner', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const name = uniqueRoom();
      await ada.putRoom(name);
      assertProblem(await bob.put(roomPath(name), {}, { 'if-none-match': '*' }), 403);
      assertProblem(await ada.put(roomPath(name), {}, { 'if-none-match': '*' }), 412);
    });

    it('without a token every rooms path is a 401', async () => {
      const name = uniqueRoom();
      for (const [method, url] of [
        ['GET', '/api/rooms'],
        ['GET', roomPath(name)],
        ['PUT', roomPath(name)],
        ['GET', `${roomPath(name)}/members`],
        ['GET', memberPath(name, 'ada')],
        ['PUT', memberPath(name, 'ada')],
        ['DELETE', memberPath(name, 'ada')],
        ['GET', `${roomPath(name)}/read-markers/ada`],
        ['GET', '/api/users/ada/rooms'],
      ] as const) {
        const response = await shared().inject({ method, url });
        assertProblem(response, 401);
        assert.match(String(response.headers['www-authenticate']), /^Bearer/);
      }
    });
  },
  AUTH,
);

eachEngine('rooms: the list (auth off)', (engine) => {
  /** A fresh app with these rooms (and whatever the store starts with, such as general). */
  async function withRooms<T>(
    specs: readonly (readonly [string, 'public' | 'private'])[],
    fn: (caller: Caller, all: string[]) => Promise<T>,
  ): Promise<T> {
    return withApp(engine, async (app) => {
      const caller = await callerFor(app, false, 'ada');
      const start = await caller.read<Room[]>('/api/rooms');
      for (const [name, visibility] of specs) await caller.putRoom(name, { visibility });
      const all = byCodePoint([...start.map((r) => r.name), ...specs.map(([n]) => n)]);
      return fn(caller, all);
    });
  }

  const MIXED = [
    ['b', 'public'],
    ['B', 'private'],
    ['a', 'public'],
    ['A', 'public'],
    ['_', 'private'],
    ['-x', 'public'],
    ['.x', 'public'],
    ['0', 'private'],
    ['Z9', 'public'],
    ['zz', 'private'],
    ['a.b', 'public'],
    ['a-b', 'public'],
    ['a_b', 'public'],
  ] as const;

  it('GET /api/rooms without limit answers every room by code point (B before a)', async () => {
    await withRooms(MIXED, async (caller, all) => {
      const response = await caller.get('/api/rooms');
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      const names = response.json<Room[]>().map((r) => r.name);
      assert.deepEqual(names, all);
      assert.ok(names.indexOf('B') < names.indexOf('a'), 'B before a');
      assert.ok(names.indexOf('Z9') < names.indexOf('_'), 'Z before _');
      assert.ok(names.indexOf('_') < names.indexOf('a'), '_ before a');
      assert.equal(response.headers.link, undefined);
      eventSeqOf(response);
    });
  });

  it('each listed room is the room as GET answers it', async () => {
    await withRooms([['only', 'private']], async (caller) => {
      const listed = (await caller.read<Room[]>('/api/rooms')).find((r) => r.name === 'only');
      assert.deepEqual(listed, await caller.read<Room>(roomPath('only')));
    });
  });

  it('limit, after and Link rel="next" walk the list once, in order', async () => {
    await withRooms(MIXED, async (caller, all) => {
      for (const limit of [1, 2, 5, all.length, all.length + 1]) {
        const walked = await walkPages<Room>(caller, `/api/rooms?limit=${limit}`);
        assert.deepEqual(
          walked.items.map((r) => r.name),
          all,
          `limit=${limit}`,
        );
        assert.equal(walked.pages, Math.max(1, Math.ceil(all.length / limit)), `limit=${limit}`);
      }
      const first = await caller.get('/api/rooms?limit=3');
      assert.match(String(first.headers.link), /^<\/api\/rooms\?[^>]*after=[^>]*>; rel="next"$/);
      const exact = await caller.get(`/api/rooms?limit=${all.length}`);
      assert.equal(exact.headers.link, undefined, 'nothing beyond: no next link');
    });
  });

  it('after=<name> is an exclusive bound by code point; a name that is not a room works too', async () => {
    await withRooms(MIXED, async (caller, all) => {
      const after = await caller.read<Room[]>('/api/rooms?after=B&limit=1000');
      assert.deepEqual(
        after.map((r) => r.name),
        all.filter((n) => n > 'B'),
      );
      const between = await caller.read<Room[]>('/api/rooms?after=aa&limit=1000');
      assert.deepEqual(
        between.map((r) => r.name),
        all.filter((n) => n > 'aa'),
      );
    });
  });

  it('visibility=public|private filters, and combines with paging', async () => {
    await withRooms(MIXED, async (caller, all) => {
      const everything = await caller.read<Room[]>('/api/rooms');
      for (const visibility of ['public', 'private'] as const) {
        const expected = everything.filter((r) => r.visibility === visibility).map((r) => r.name);
        const listed = await caller.read<Room[]>(`/api/rooms?visibility=${visibility}`);
        assert.deepEqual(
          listed.map((r) => r.name),
          expected,
        );
        const paged = await walkPages<Room>(caller, `/api/rooms?visibility=${visibility}&limit=2`);
        assert.deepEqual(
          paged.items.map((r) => r.name),
          expected,
        );
        for (const url of paged.urls) assert.match(url, new RegExp(`visibility=${visibility}`));
      }
      assert.equal(everything.length, all.length);
    });
  });

  it('Event-Seq is the latest change before the read, on every page', async () => {
    await withRooms([['one', 'public']], async (caller) => {
      const before = eventSeqOf(await caller.get('/api/rooms'));
      assert.ok(before >= 1, 'creating a room is a change');
      await caller.putRoom('two');
      const after = await caller.get('/api/rooms?limit=1');
      assert.equal(eventSeqOf(after), before + 1);
      const messages = await caller.get('/api/messages?limit=1');
      assert.equal(eventSeqOf(messages), before + 1, 'one global sequence');
    });
  });

  it('streams a long list whole without limit', async () => {
    await withApp(engine, async (app) => {
      const caller = await callerFor(app, false, 'ada');
      const start = (await caller.read<Room[]>('/api/rooms')).map((r) => r.name);
      const names = Array.from({ length: 60 }, (_, i) => `room-${String(i).padStart(3, '0')}`);
      for (const name of names) await caller.putRoom(name);
      const response = await app.fetch('/api/rooms');
      assert.equal(response.response.status, 200);
      const listed = (JSON.parse(response.body) as Room[]).map((r) => r.name);
      assert.deepEqual(listed, byCodePoint([...start, ...names]));
      assert.match(String(response.response.headers.get('event-seq')), /^\d+$/);
    });
  });

  it('bad parameters are a 400 naming them; unknown ones are ignored', async () => {
    await withRooms([], async (caller) => {
      for (const [query, parameter] of [
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['limit=x', 'limit'],
        ['limit=1&limit=2', 'limit'],
        ['visibility=secret', 'visibility'],
        ['after=a%20b', 'after'],
        ['after=a&after=b', 'after'],
      ] as const) {
        const response = await caller.get(`/api/rooms?${query}`);
        const problem = assertProblem(response, 400, 'validation');
        assert.equal(onlyError(problem).parameter, parameter, query);
      }
      assert.equal((await caller.get('/api/rooms?colour=red')).statusCode, 200);
    });
  });
});

eachEngine('rooms: timestamps follow the clock', (engine) => {
  it('createdAt on create, updatedAt on each change, kept on a no-op', async () => {
    const clock = new ManualClock();
    await withApp(
      engine,
      async (app) => {
        const caller = await callerFor(app, false, 'ada');
        const created = await caller.putRoom('timed');
        assert.equal(created.createdAt, '2030-01-01T00:00:00.000Z');
        clock.advance(1500);
        const updated = await caller.putRoom('timed', { topic: 'later' });
        assert.equal(updated.createdAt, '2030-01-01T00:00:00.000Z');
        assert.equal(updated.updatedAt, '2030-01-01T00:00:01.500Z');
        clock.advance(1500);
        const same = await caller.putRoom('timed', { topic: 'later' });
        assert.equal(same.updatedAt, '2030-01-01T00:00:01.500Z', 'nothing changed');
        const stale = await caller.put(roomPath('timed'), {
          topic: 'x',
          updatedAt: created.updatedAt,
        });
        assertProblem(stale, 409);
        // The same instant written another way is the current one.
        const equivalent = await caller.put(roomPath('timed'), {
          topic: 'y',
          createdAt: '2030-01-01T00:00:00Z',
        });
        assert.equal(equivalent.statusCode, 200, equivalent.body);
        assert.equal(equivalent.headers.etag, etag(3));
      },
      {},
      { now: clock.now },
    );
  });
});
