/**
 * Who may read a room, on every path, on every engine. With auth on a
 * private room is its members' and admins' only: every request that names it
 * is a 403 for anyone else, its messages by id are 404, lists leave it out,
 * and a removed member loses access at once. With auth off everything is open.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import type { Membership, Room } from '../../src/domain/room.ts';
import { AUTH } from '../auth/tokens.ts';
import { connectSse } from '../events/sse-client.ts';
import { assertProblem, eachEngine, uniqueRoom, type ContractApp } from '../http/http-contract.ts';
import {
  baseUrl,
  callerFor,
  markerPath,
  memberPath,
  membersPath,
  roomPath,
  type Caller,
  type Response,
} from './rooms-support.ts';

interface Scene {
  readonly ada: Caller; // owner
  readonly bob: Caller; // member
  readonly eve: Caller; // neither
  readonly root: Caller; // admin
  /** The private room and a message in it (and a reply to it). */
  readonly closed: string;
  readonly secret: Message;
  readonly reply: Message;
  /** A public room and a message in it. */
  readonly open: string;
  readonly hello: Message;
}

async function scene(app: ContractApp, auth: boolean): Promise<Scene> {
  const ada = await callerFor(app, auth, 'ada');
  const bob = await callerFor(app, auth, 'bob');
  const eve = await callerFor(app, auth, 'eve');
  const root = await callerFor(app, auth, 'root', true);
  const closed = uniqueRoom();
  await ada.putRoom(closed, { visibility: 'private', topic: 'secret plans' });
  if (!auth) await ada.putMember(closed, 'ada', { role: 'owner' });
  await ada.putMember(closed, 'bob');
  const word = `needle${uniqueRoom().slice(2)}`;
  const secret = await ada.post(closed, `the ${word} is here`);
  const reply = await bob.post(closed, `re ${word}`);
  const open = uniqueRoom();
  const hello = await ada.post(open, `public ${word}`);
  return { ada, bob, eve, root, closed, secret, reply, open, hello };
}

/** Every request that names the room `name` (its message `id`), as one caller might send it. */
function namingRequests(name: string, id: string, self: string): [string, string, unknown?][] {
  return [
    ['GET', roomPath(name)],
    ['PUT', roomPath(name), { topic: 'taken' }],
    ['GET', membersPath(name)],
    ['GET', `${membersPath(name)}?limit=1`],
    ['GET', memberPath(name, 'ada')],
    ['GET', memberPath(name, self)],
    ['GET', memberPath(name, 'nobody')],
    ['PUT', memberPath(name, self), {}],
    ['DELETE', memberPath(name, self)],
    ['DELETE', memberPath(name, 'bob')],
    ['GET', markerPath(name, self)],
    ['PUT', markerPath(name, self), { lastRead: id }],
    ['GET', `/api/messages?room=${name}`],
    ['GET', `/api/messages?room=${name}&limit=10&order=desc`],
    ['GET', `/api/messages?room=${name}&around=${id}`],
    ['POST', '/api/messages', { author: self, content: 'let me in', room: name }],
  ];
}

/** Every request about one message of the room by its id. */
function byIdRequests(id: string, self: string): [string, string, unknown?][] {
  return [
    ['GET', `/api/messages/${id}`],
    ['GET', `/api/messages/${id.toUpperCase()}`],
    ['PUT', `/api/messages/${id}`, { content: 'edited' }],
    ['DELETE', `/api/messages/${id}`],
    ['GET', `/api/messages/${id}/revisions`],
    ['GET', `/api/messages/${id}/reactions`],
    ['PUT', `/api/messages/${id}/reactions/${encodeURIComponent('👍')}/${self}`],
    ['DELETE', `/api/messages/${id}/reactions/${encodeURIComponent('👍')}/${self}`],
    ['GET', `/api/messages/${id}/reactions/${encodeURIComponent('👍')}`],
  ];
}

async function send(caller: Caller, [method, url, body]: [string, string, unknown?]) {
  return caller.request(method, url, body);
}

async function list<T>(caller: Caller, url: string): Promise<T[]> {
  return caller.read<T[]>(url);
}

eachEngine(
  'room access (auth on)',
  (_engine, shared) => {
    it('a private room: every request that names it is a 403 for a non-member', async () => {
      const s = await scene(shared(), true);
      for (const request of namingRequests(s.closed, s.secret.id, 'eve')) {
        const response = await send(s.eve, request);
        assert.equal(response.statusCode, 403, `${request[0]} ${request[1]}: ${response.body}`);
        assertProblem(response, 403);
      }
      // Nothing was written by any of them.
      assertProblem(await s.ada.get(memberPath(s.closed, 'eve')), 404);
      assert.equal((await s.ada.read<Room>(roomPath(s.closed))).topic, 'secret plans');
      assert.equal((await s.ada.read<Message[]>(`/api/messages?room=${s.closed}`)).length, 2);
    });

    it('a private room: its messages by id are a 404 for a non-member', async () => {
      const s = await scene(shared(), true);
      for (const request of byIdRequests(s.secret.id, 'eve')) {
        const response = await send(s.eve, request);
        assert.equal(response.statusCode, 404, `${request[0]} ${request[1]}: ${response.body}`);
        assertProblem(response, 404);
      }
      assert.equal((await s.ada.get(`/api/messages/${s.secret.id}`)).statusCode, 200);
    });

    it('a private room: lists leave it out for a non-member', async () => {
      const s = await scene(shared(), true);
      const rooms = (await list<Room>(s.eve, '/api/rooms')).map((r) => r.name);
      assert.ok(!rooms.includes(s.closed));
      assert.ok(rooms.includes(s.open));
      const paged = await list<Room>(s.eve, `/api/rooms?visibility=private&limit=1000`);
      assert.ok(!paged.some((r) => r.name === s.closed));
      const all = await list<Message>(s.eve, '/api/messages');
      assert.ok(!all.some((m) => m.room === s.closed));
      assert.ok(all.some((m) => m.id === s.hello.id));
      const ids = await list<Message>(
        s.eve,
        `/api/messages?id=${s.secret.id}&id=${s.reply.id}&id=${s.hello.id}`,
      );
      assert.deepEqual(
        ids.map((m) => m.id),
        [s.hello.id],
      );
      const desc = await list<Message>(s.eve, '/api/messages?order=desc&limit=1000');
      assert.ok(!desc.some((m) => m.room === s.closed));
      // Around a private message: a position like any other, its room's messages left out.
      const around = await list<Message>(s.eve, `/api/messages?around=${s.secret.id}&limit=1000`);
      assert.ok(!around.some((m) => m.room === s.closed));
      assert.ok(around.some((m) => m.id === s.hello.id));
      const theirsAround = await list<Message>(
        s.bob,
        `/api/messages?around=${s.secret.id}&limit=2`,
      );
      assert.deepEqual(
        theirsAround.map((m) => m.id),
        [s.secret.id, s.reply.id],
      );
      const theirs = await list<Room>(s.eve, '/api/users/eve/rooms');
      assert.ok(!theirs.some((r) => r.name === s.closed));
    });

    it('a private room: a search leaves it out for a non-member, and naming it is a 403', async () => {
      const s = await scene(shared(), true);
      const word = s.hello.content.split(' ')[1]!;
      const ids = (ms: Message[]) => ms.map((m) => m.id);
      assert.deepEqual(ids(await list<Message>(s.eve, `/api/messages?q=${word}`)), [s.hello.id]);
      for (const who of [s.bob, s.root, s.ada]) {
        assert.deepEqual(ids(await list<Message>(who, `/api/messages?q=${word}&limit=10`)), [
          s.secret.id,
          s.reply.id,
          s.hello.id,
        ]);
      }
      assertProblem(await s.eve.request('GET', `/api/messages?q=${word}&room=${s.closed}`), 403);
    });

    it('a private room: members and admins read and write it everywhere', async () => {
      const s = await scene(shared(), true);
      for (const who of [s.bob, s.root, s.ada]) {
        assert.equal((await who.get(roomPath(s.closed))).statusCode, 200);
        assert.equal((await who.get(membersPath(s.closed))).statusCode, 200);
        assert.equal((await who.get(memberPath(s.closed, 'bob'))).statusCode, 200);
        assert.equal((await who.get(`/api/messages/${s.secret.id}`)).statusCode, 200);
        const inRoom = await list<Message>(who, `/api/messages?room=${s.closed}`);
        // The first two; the loop's own posts follow them.
        assert.deepEqual(
          inRoom.slice(0, 2).map((m) => m.id),
          [s.secret.id, s.reply.id],
        );
        assert.ok((await list<Message>(who, '/api/messages')).some((m) => m.id === s.secret.id));
        assert.ok((await list<Room>(who, '/api/rooms')).some((r) => r.name === s.closed));
        await who.post(s.closed, `from ${who.sub}`);
      }
      assert.equal((await s.bob.get(markerPath(s.closed, 'bob'))).statusCode, 200);
      assert.equal((await s.root.get(markerPath(s.closed, 'bob'))).statusCode, 200);
    });

    it('a removed member loses access at once', async () => {
      const s = await scene(shared(), true);
      assert.equal((await s.ada.delete(memberPath(s.closed, 'bob'))).statusCode, 200);
      for (const request of namingRequests(s.closed, s.secret.id, 'bob')) {
        const response = await send(s.bob, request);
        assert.equal(response.statusCode, 403, `${request[0]} ${request[1]}: ${response.body}`);
      }
      for (const request of byIdRequests(s.reply.id, 'bob')) {
        const response = await send(s.bob, request);
        assert.equal(response.statusCode, 404, `${request[0]} ${request[1]}: ${response.body}`);
      }
      assert.ok(!(await list<Message>(s.bob, '/api/messages')).some((m) => m.room === s.closed));
      assert.ok(!(await list<Room>(s.bob, '/api/rooms')).some((r) => r.name === s.closed));
    });

    it('a member who leaves a private room loses access at once too', async () => {
      const s = await scene(shared(), true);
      assert.equal((await s.bob.delete(memberPath(s.closed, 'bob'))).statusCode, 200);
      assertProblem(await s.bob.get(roomPath(s.closed)), 403);
      assertProblem(await s.bob.get(`/api/messages/${s.secret.id}`), 404);
    });

    it('a public room made private closes at once to non-members', async () => {
      const s = await scene(shared(), true);
      assert.equal((await s.eve.get(roomPath(s.open))).statusCode, 200);
      assert.equal((await s.eve.get(`/api/messages/${s.hello.id}`)).statusCode, 200);
      await s.ada.putRoom(s.open, { visibility: 'private' });
      assertProblem(await s.eve.get(roomPath(s.open)), 403);
      assertProblem(await s.eve.get(`/api/messages?room=${s.open}`), 403);
      assertProblem(await s.eve.get(`/api/messages/${s.hello.id}`), 404);
      assert.ok(!(await list<Message>(s.eve, '/api/messages')).some((m) => m.room === s.open));
      await s.ada.putRoom(s.open, { visibility: 'public' });
      assert.equal((await s.eve.get(`/api/messages/${s.hello.id}`)).statusCode, 200);
    });

    it('a public room: everyone signed in reads it and posts to it', async () => {
      const s = await scene(shared(), true);
      assert.equal((await s.eve.get(roomPath(s.open))).statusCode, 200);
      assert.equal((await s.eve.get(membersPath(s.open))).statusCode, 200);
      assert.equal((await s.eve.get(memberPath(s.open, 'ada'))).statusCode, 200);
      assert.equal((await s.eve.get(markerPath(s.open, 'eve'))).statusCode, 200);
      assert.equal((await list(s.eve, `/api/messages?room=${s.open}`)).length, 1);
      await s.eve.post(s.open, 'me too');
      const members = await list<Membership>(s.eve, membersPath(s.open));
      assert.deepEqual(
        members.map((m) => m.subject),
        ['ada'],
        'posting joins nobody',
      );
    });

    it('a ?room= event stream of a private room is a 403 for a non-member', async () => {
      const s = await scene(shared(), true);
      const url = await baseUrl(shared());
      const eve = await connectSse(`${url}/api/events?room=${s.closed}`, { headers: s.eve.auth });
      assert.equal(eve.status, 403);
      assert.match(String(eve.headers['content-type']), /^application\/problem\+json/);
      await eve.body();
      const bob = await connectSse(`${url}/api/events?room=${s.closed}`, { headers: s.bob.auth });
      assert.equal(bob.status, 200);
      bob.close();
    });

    it('precedence: 400 before 404 before 403', async () => {
      const s = await scene(shared(), true);
      const missing = uniqueRoom();
      assertProblem(await s.eve.get(roomPath(missing)), 404);
      assertProblem(await s.eve.get(membersPath(missing)), 404);
      assert.deepEqual(await list(s.eve, `/api/messages?room=${missing}`), []);
      assertProblem(await s.eve.put(roomPath(s.closed), { visibility: 'secret' }), 400);
      assertProblem(await s.eve.get(`/api/messages?room=${s.closed}&limit=0`), 400);
      assertProblem(await s.eve.get(`${membersPath(s.closed)}?limit=0`), 400);
      const post = await s.eve.request('POST', '/api/messages', { room: s.closed, content: '' });
      assertProblem(post, 400);
      // A message that does not exist in a private room: 403 for the room first.
      assertProblem(await s.eve.get(memberPath(s.closed, 'nobody')), 403);
    });
  },
  AUTH,
);

eachEngine('room access (auth off): everything is open', (_engine, shared) => {
  it('a private room is open to every request', async () => {
    const s = await scene(shared(), false);
    const ok = (response: Response, what: string) =>
      assert.ok(response.statusCode < 300, `${what}: ${response.statusCode} ${response.body}`);
    // Reads of memberships that do not exist are 404s, as for anyone: leave them out.
    const absent = [memberPath(s.closed, 'nobody'), memberPath(s.closed, 'eve')];
    for (const request of namingRequests(s.closed, s.reply.id, 'eve')) {
      if (request[0] === 'GET' && absent.includes(request[1])) continue;
      ok(await send(s.eve, request), `${request[0]} ${request[1]}`);
    }
    for (const request of byIdRequests(s.secret.id, 'eve').slice(0, 3)) {
      ok(await send(s.eve, request), `${request[0]} ${request[1]}`);
    }
    assert.ok((await list<Message>(s.eve, '/api/messages')).some((m) => m.room === s.closed));
    assert.ok((await list<Room>(s.eve, '/api/rooms')).some((r) => r.name === s.closed));
    const url = await baseUrl(shared());
    const stream = await connectSse(`${url}/api/events?room=${s.closed}`);
    assert.equal(stream.status, 200);
    stream.close();
  });
});
