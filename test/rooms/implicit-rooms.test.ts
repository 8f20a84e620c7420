/**
 * The first message posted to a name that is not a room yet creates it, on
 * every engine: a public room whose createdBy is the author, who becomes its
 * owner, with the events room.created, member.added, message.created in that
 * order. A request that fails and an idempotent replay create nothing;
 * posting to an existing room joins nobody.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Membership, Room } from '../../src/domain/room.ts';
import { AUTH } from '../auth/tokens.ts';
import { connectSse } from '../events/sse-client.ts';
import {
  assertProblem,
  eachEngine,
  uniqueRoom,
  withApp,
  type ContractApp,
} from '../http/http-contract.ts';
import {
  ManualClock,
  baseUrl,
  callerFor,
  eventSeqOf,
  membersPath,
  roomPath,
  type Caller,
} from './rooms-support.ts';

const MISSING = '01890a5d-ac96-774b-bcce-b302099a8057';

async function latestSeq(caller: Caller): Promise<number> {
  return eventSeqOf(await caller.get('/api/messages?limit=1'));
}

for (const auth of [false, true]) {
  const mode = auth ? 'auth on' : 'auth off';
  eachEngine(
    `implicit rooms (${mode})`,
    (engine, shared) => {
      const as = (sub: string) => callerFor(shared(), auth, sub);

      it('the first message creates a public room owned by its author', async () => {
        const ada = await as('ada');
        const name = uniqueRoom();
        const message = await ada.post(name, 'first');
        const room = await ada.read<Room>(roomPath(name));
        assert.equal(room.name, name);
        assert.equal(room.visibility, 'public');
        assert.equal(room.topic, '');
        assert.equal(room.createdBy, 'ada');
        assert.equal(room.version, 1);
        assert.ok(room.createdAt <= message.createdAt);
        assert.equal(room.updatedAt, room.createdAt);
        const members = await ada.read<Membership[]>(membersPath(name));
        assert.deepEqual(
          members.map((m) => [m.subject, m.role]),
          [['ada', 'owner']],
        );
      });

      it('posting to an existing room joins nobody', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        await ada.post(name, 'first');
        await bob.post(name, 'second');
        const members = await ada.read<Membership[]>(membersPath(name));
        assert.deepEqual(
          members.map((m) => m.subject),
          ['ada'],
        );
        const room = await ada.read<Room>(roomPath(name));
        assert.equal(room.createdBy, 'ada');
        assert.equal(room.version, 1, 'a message does not change its room');
      });

      it('posting to a room created by PUT joins nobody either', async () => {
        const ada = await as('ada');
        const bob = await as('bob');
        const name = uniqueRoom();
        await ada.putRoom(name);
        await bob.post(name, 'hello');
        const members = await ada.read<Membership[]>(membersPath(name));
        assert.deepEqual(
          members.map((m) => m.subject),
          auth ? ['ada'] : [],
        );
      });

      it('a request that fails creates no room and no change', async () => {
        const ada = await as('ada');
        const before = await latestSeq(ada);
        const failures: Record<string, unknown>[] = [
          { content: '   ' },
          { content: 'x', colour: 'red' },
          // replyTo is checked after access, inside the write: the room must not outlive it.
          { content: 'x', replyTo: MISSING },
        ];
        for (const body of failures) {
          const name = uniqueRoom();
          const response = await ada.request('POST', '/api/messages', {
            author: 'ada',
            room: name,
            ...body,
          });
          assertProblem(response, 400);
          assertProblem(await ada.get(roomPath(name)), 404);
          const listed = await ada.read<Room[]>('/api/rooms');
          assert.ok(!listed.some((r) => r.name === name), 'not listed');
        }
        assert.equal(await latestSeq(ada), before, 'no change appended');
      });

      it('a reply to a message of another room creates no room', async () => {
        const ada = await as('ada');
        const other = await ada.post(uniqueRoom(), 'elsewhere');
        const name = uniqueRoom();
        const response = await ada.request('POST', '/api/messages', {
          author: 'ada',
          room: name,
          content: 'reply',
          replyTo: other.id,
        });
        assertProblem(response, 400);
        assertProblem(await ada.get(roomPath(name)), 404);
      });

      it('an idempotent replay creates nothing; a 422 with the key creates no room', async () => {
        const ada = await as('ada');
        const key = { 'idempotency-key': `k-${uniqueRoom()}` };
        const name = uniqueRoom();
        const body = { author: 'ada', room: name, content: 'once' };
        const first = await ada.request('POST', '/api/messages', body, key);
        assert.equal(first.statusCode, 201, first.body);
        const seq = await latestSeq(ada);
        const room = await ada.read<Room>(roomPath(name));
        const replay = await ada.request('POST', '/api/messages', body, key);
        assert.equal(replay.statusCode, 201);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.equal(await latestSeq(ada), seq, 'no change appended');
        assert.deepEqual(await ada.read<Room>(roomPath(name)), room);
        assert.equal((await ada.read<Membership[]>(membersPath(name))).length, 1);

        const elsewhere = uniqueRoom();
        const conflict = await ada.request(
          'POST',
          '/api/messages',
          { ...body, room: elsewhere },
          key,
        );
        assertProblem(conflict, 422);
        assertProblem(await ada.get(roomPath(elsewhere)), 404);
        assert.equal(await latestSeq(ada), seq);
      });

      it('events: room.created, member.added, message.created, in this order', async () => {
        const ada = await as('ada');
        const seq = await latestSeq(ada);
        const name = uniqueRoom();
        const message = await ada.post(name, 'first');
        const stream = await connectSse(
          `${await baseUrl(shared())}/api/events?room=${name}&since=${seq}`,
          {
            headers: ada.auth,
          },
        );
        try {
          assert.equal(stream.status, 200);
          await stream.waitFor((c) => c.events.length >= 3, 'three events');
          const events = stream.events.slice(0, 3);
          assert.deepEqual(
            events.map((e) => e.event),
            ['room.created', 'member.added', 'message.created'],
          );
          const ids = events.map((e) => Number(e.id));
          assert.ok(ids[0]! > seq && ids[0]! < ids[1]! && ids[1]! < ids[2]!, ids.join(' '));
          const room = JSON.parse(events[0]!.data) as Room;
          assert.deepEqual(room, await ada.read<Room>(roomPath(name)));
          const membership = JSON.parse(events[1]!.data) as Membership;
          assert.deepEqual(
            { room: membership.room, subject: membership.subject, role: membership.role },
            { room: name, subject: 'ada', role: 'owner' },
          );
          assert.deepEqual(JSON.parse(events[2]!.data), message);
        } finally {
          stream.close();
        }
      });
    },
    auth ? AUTH : {},
  );
}

eachEngine('implicit rooms: the store starts with general', (engine) => {
  it('general is a public room with no owner before any message', async () => {
    await withApp(engine, async (app: ContractApp) => {
      const ada = await callerFor(app, false, 'ada');
      const general = await ada.read<Room>(roomPath('general'));
      assert.equal(general.visibility, 'public');
      assert.equal(general.createdBy, null);
      assert.deepEqual(await ada.read<Membership[]>(membersPath('general')), []);
    });
  });

  it('a message without room goes to general and makes nobody its member', async () => {
    const clock = new ManualClock();
    await withApp(
      engine,
      async (app: ContractApp) => {
        const ada = await callerFor(app, false, 'ada');
        const response = await ada.request('POST', '/api/messages', {
          author: 'ada',
          content: 'hi',
        });
        assert.equal(response.statusCode, 201);
        assert.equal(response.json<{ room: string }>().room, 'general');
        assert.deepEqual(await ada.read<Membership[]>(membersPath('general')), []);
      },
      {},
      { now: clock.now },
    );
  });

  it('the implicit room is created at the message’s time', async () => {
    const clock = new ManualClock('2031-05-06T07:08:09.010Z');
    await withApp(
      engine,
      async (app: ContractApp) => {
        const ada = await callerFor(app, false, 'ada');
        const message = await ada.post('timed', 'hi');
        const room = await ada.read<Room>(roomPath('timed'));
        assert.equal(message.createdAt, '2031-05-06T07:08:09.010Z');
        assert.equal(room.createdAt, message.createdAt);
        const members = await ada.read<Membership[]>(membersPath('timed'));
        assert.equal(members[0]?.joinedAt, message.createdAt);
      },
      {},
      { now: clock.now },
    );
  });
});
