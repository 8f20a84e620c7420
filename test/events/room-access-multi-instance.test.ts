/**
 * Room access on the event stream when several instances share one
 * PostgreSQL (auth on, real tokens). Writes go through one instance and the
 * streams that must (or must not) see them are held on the others, so every
 * access decision a stream makes rests on a change it learnt through the
 * change log and NOTIFY, never on the write's own process.
 *
 * "Nothing arrived" is never a timed wait: a later change the stream must
 * receive (a marker message in a public room) proves that every earlier one
 * was delivered or left out. Resumes are compared with the committed change
 * log filtered by the contract's rules (room-access-support.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AUTH } from '../auth/tokens.ts';
import { postgresEngine, skipUnlessEngine, type TestDatabase } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { assertStrictlyIncreasing } from './event-helpers.ts';
import {
  asReceived,
  Instances,
  of,
  readableReplay,
  received,
  unique,
  user,
  type Received,
  type User,
} from './room-access-support.ts';
import type { SseClient } from './sse-client.ts';
import { accessChangesWhileReading, replayAfterAccessChanges } from './room-access-scenarios.ts';

const INSTANCES = 3;

describe('room access on event streams across instances (postgres, auth on)', async () => {
  const skip = await skipUnlessEngine(postgresEngine);
  let db: TestDatabase;
  const apps: TestApp[] = [];
  let instances: Instances;
  let ada: User; // owns the rooms
  let bob: User; // a member, then removed
  let carol: User; // never a member
  let root: User; // an admin

  before(async () => {
    if (skip) return;
    db = await postgresEngine.createDatabase();
    const started = await Promise.all(
      Array.from({ length: INSTANCES }, () =>
        startTestApp(postgresEngine, { ...AUTH, eventsHeartbeatMs: 100 }, {}, db),
      ),
    );
    apps.push(...started);
    await Promise.all(apps.map((t) => t.listen()));
    instances = new Instances(apps);
    [ada, bob, carol, root] = await Promise.all([
      user('ada'),
      user('bob'),
      user('carol'),
      user('root', true),
    ]);
  });
  after(async () => {
    instances?.closeStreams();
    await Promise.all(apps.map((t) => t.close()));
    await db?.cleanup();
  });

  const call: Instances['call'] = (...args) => instances.call(...args);
  const post: Instances['post'] = (...args) => instances.post(...args);
  const stream: Instances['stream'] = (...args) => instances.stream(...args);
  const latestSeq = () => instances.latestSeq(root);
  const marker = (...clients: SseClient[]) => instances.marker(ada, ...clients);
  const log: Instances['log'] = (...args) => instances.log(...args);
  const hop: Instances['hop'] = (...args) => instances.hop(...args);

  /** The events a client received before `mark` arrived. */
  function beforeMark(client: SseClient, mark: { id: string }): Received[] {
    const all = received(client);
    const index = all.findIndex((e) => e.event === 'message.created' && e.data.id === mark.id);
    assert.ok(index >= 0, 'the marker arrived');
    return all.slice(0, index);
  }

  it(
    'a removed member: its streams on other instances, a never-member, and resumes',
    { skip },
    async () => {
      const room = unique('private');
      // Carol, never a member, watches from before the room exists, on both other instances.
      const carolAll = [await stream(2, carol), await stream(3, carol)];
      const rootAll = await stream(2, root);
      const start = await latestSeq();

      await call(1, ada, 'PUT', `/api/rooms/${room}`, { visibility: 'private' }, 201);
      await call(1, ada, 'PUT', `/api/rooms/${room}/members/bob`, {}, 201);
      const bobAll = await stream(2, bob);
      const bobRoom = await stream(3, bob, `?room=${room}`);
      assert.equal(bobAll.status, 200);
      assert.equal(bobRoom.status, 200);
      for (const n of [1, 2, 3]) {
        const refused = await stream(n, carol, `?room=${room}`);
        assert.equal(refused.status, 403, `carol's ?room= on instance ${n}`);
      }
      const seen = await post(1, ada, room, 'while bob is in');
      for (const client of [bobAll, bobRoom]) {
        await client.waitFor((c) => received(c).some((e) => e.data.id === seen.id), 'the message');
      }

      const removed = await call(
        1,
        ada,
        'DELETE',
        `/api/rooms/${room}/members/bob`,
        undefined,
        200,
      );
      // Writes of the room after the removal, through every instance.
      const unseen = [];
      for (const n of [1, 2, 3, 1, 2]) unseen.push(await post(n, ada, room, `after bob, via ${n}`));
      await call(2, ada, 'PUT', `/api/rooms/${room}`, { topic: 'bob is gone' }, 200);
      await call(3, ada, 'PUT', `/api/rooms/${room}/members/dave`, {}, 201);
      await call(
        1,
        ada,
        'PUT',
        `/api/rooms/${room}/read-markers/ada`,
        { lastRead: unseen[4]!.id },
        200,
      );
      const mark = await marker(bobAll, rootAll, ...carolAll);

      // Bob's unfiltered stream: his own member.removed, then nothing of the room.
      const bobOfRoom = received(bobAll).filter(of(room));
      assert.deepEqual(
        bobOfRoom.map((e) => e.event),
        ['message.created', 'member.removed'],
      );
      assert.deepEqual(bobOfRoom[1]!.data, { ...removed.json<object>(), removedBy: 'ada' });
      assert.deepEqual(
        beforeMark(bobAll, mark).filter(of(room)),
        bobOfRoom,
        'all of it before the marker',
      );
      assertStrictlyIncreasing(
        received(bobAll).map((e) => e.seq),
        'bob',
      );

      // His ?room= stream ends right after it; reconnecting anywhere is a 403.
      await bobRoom.waitFor((c) => c.ended, 'bob’s ?room= stream to end');
      assert.deepEqual(
        received(bobRoom).map((e) => e.event),
        ['message.created', 'member.removed'],
      );
      assert.deepEqual(received(bobRoom)[1], bobOfRoom[1]);
      for (const n of [1, 2, 3]) {
        const again = await stream(n, bob, `?room=${room}`);
        assert.equal(again.status, 403, `bob's ?room= again on instance ${n}`);
        assert.match(String(again.headers['content-type']), /^application\/problem\+json/);
      }

      // Carol got nothing of the room at any point; the admin got all of it (but ada's marker).
      for (const client of carolAll) assert.deepEqual(received(client).filter(of(room)), []);
      assert.deepEqual(
        received(rootAll)
          .filter(of(room))
          .map((e) => e.event),
        [
          'room.created',
          'member.added',
          'member.added',
          'message.created',
          'member.removed',
          ...unseen.map(() => 'message.created'),
          'room.updated',
          'member.added',
        ],
      );

      // Resumes after the removal, from before the room existed, hopping across instances while
      // the room and a public one are written to: exactly what bob and carol may read now.
      const lobby = unique('lobby');
      await post(3, ada, lobby, 'lobby opens');
      let last: string | undefined;
      const writer = (async () => {
        for (let i = 0; i < 12; i++)
          await post((i % 3) + 1, ada, i % 2 === 0 ? room : lobby, `w${i}`);
        last = (await post(2, ada, lobby, 'the last one')).id;
      })();
      const [bobGot, carolGot] = await Promise.all([
        hop(bob, start, 2, () => last),
        hop(carol, start, 3, () => last),
        writer,
      ]);
      const end = bobGot.at(-1)!.seq;
      const changes = await log(start, end);
      assert.deepEqual(bobGot, readableReplay(changes, bob), 'bob resumed');
      assert.deepEqual(carolGot, readableReplay(changes, carol), 'carol resumed');
      assert.deepEqual(
        bobGot.filter(of(room)).map((e) => e.event),
        ['member.removed'],
        'bob: of the room, only his removal',
      );
      assert.deepEqual(carolGot.filter(of(room)), []);
      // Not vacuous: the room's messages (1 before the removal, 5 after, 6 of the writer) are in the log.
      assert.equal(
        changes.filter((c) => c.room === room && c.kind === 'message.created').length,
        12,
      );
    },
  );

  it(
    'a room made private reaches a reader who could read it before, then nothing more',
    { skip },
    async () => {
      const room = unique('closing');
      await call(1, ada, 'PUT', `/api/rooms/${room}`, {}, 201);
      const start = await latestSeq();
      const carolAll = await stream(2, carol);
      const carolRoom = await stream(3, carol, `?room=${room}`);
      const adaAll = await stream(3, ada);
      assert.equal(carolRoom.status, 200);
      const visible = await post(1, ada, room, 'public for now');
      for (const client of [carolAll, carolRoom]) {
        await client.waitFor(
          (c) => received(c).some((e) => e.data.id === visible.id),
          'the message',
        );
      }

      const closed = (
        await call(1, ada, 'PUT', `/api/rooms/${room}`, { visibility: 'private' }, 200)
      ).json<object>();
      for (const n of [1, 2, 3]) await post(n, ada, room, `private now, via ${n}`);
      await call(2, ada, 'PUT', `/api/rooms/${room}`, { topic: 'secret' }, 200);
      await call(3, ada, 'PUT', `/api/rooms/${room}/members/bob`, {}, 201);
      const mark = await marker(carolAll, adaAll);

      assert.deepEqual(received(carolAll).filter(of(room)), [
        {
          seq: received(carolAll).find((e) => e.data.id === visible.id)!.seq,
          event: 'message.created',
          data: visible,
        },
        { seq: received(carolAll).filter(of(room))[1]!.seq, event: 'room.updated', data: closed },
      ]);
      assert.ok(beforeMark(carolAll, mark).length > 0);
      // The owner, a member, got everything that followed: the changes were there to leave out.
      assert.deepEqual(
        received(adaAll)
          .filter(of(room))
          .map((e) => e.event),
        [
          'message.created',
          'room.updated',
          'message.created',
          'message.created',
          'message.created',
          'room.updated',
          'member.added',
        ],
      );

      await carolRoom.waitFor((c) => c.ended, 'carol’s ?room= stream to end');
      assert.deepEqual(
        received(carolRoom).map((e) => e.event),
        ['message.created', 'room.updated'],
      );
      for (const n of [1, 2, 3]) {
        assert.equal((await stream(n, carol, `?room=${room}`)).status, 403, `instance ${n}`);
      }

      // A resume from before it closed: the closing update, and none of the messages (not readable now).
      let last: string | undefined;
      const writer = (async () => {
        last = (await post(1, ada, unique('lobby'), 'the last one')).id;
      })();
      const [got] = await Promise.all([hop(carol, start, 2, () => last), writer]);
      const changes = await log(start, got.at(-1)!.seq);
      assert.deepEqual(got, readableReplay(changes, carol));
      assert.deepEqual(
        got.filter(of(room)).map((e) => e.event),
        ['room.updated'],
      );
    },
  );

  it('a read marker reaches only its subject’s streams, on every instance', { skip }, async () => {
    const room = unique('markers');
    await call(1, ada, 'PUT', `/api/rooms/${room}`, {}, 201);
    await call(1, ada, 'PUT', `/api/rooms/${room}/members/bob`, {}, 201);
    const message = await post(1, ada, room, 'read me');
    const start = await latestSeq();
    const bobs = [await stream(2, bob), await stream(3, bob, `?room=${room}`)];
    const adas = [await stream(3, ada), await stream(2, ada, `?room=${room}`)];
    const others = [
      await stream(2, root),
      await stream(3, root, `?room=${room}`),
      await stream(3, carol),
    ];

    const bobMarker = (
      await call(
        1,
        bob,
        'PUT',
        `/api/rooms/${room}/read-markers/bob`,
        { lastRead: message.id },
        200,
      )
    ).json<Record<string, unknown>>();
    const adaMarker = (
      await call(
        2,
        ada,
        'PUT',
        `/api/rooms/${room}/read-markers/ada`,
        { lastRead: message.id },
        200,
      )
    ).json<Record<string, unknown>>();
    // An admin may not move another subject's marker: no event from that either.
    await call(
      3,
      root,
      'PUT',
      `/api/rooms/${room}/read-markers/bob`,
      { lastRead: message.id },
      403,
    );
    const after = await post(3, ada, room, 'after the markers');
    for (const client of [...bobs, ...adas, ...others]) {
      await client.waitFor(
        (c) => received(c).some((e) => e.data.id === after.id),
        'the message after',
      );
    }

    const markers = (client: SseClient) =>
      received(client)
        .filter((e) => e.event === 'read-marker.updated')
        .map((e) => e.data);
    const withoutUnread = (m: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(m).filter(([key]) => key !== 'unread'));
    for (const client of bobs) assert.deepEqual(markers(client), [withoutUnread(bobMarker)]);
    for (const client of adas) assert.deepEqual(markers(client), [withoutUnread(adaMarker)]);
    for (const client of others) assert.deepEqual(markers(client), []);

    // A replay is filtered the same way: the admin's holds neither marker.
    let last: string | undefined;
    const writer = (async () => {
      last = (await post(2, ada, room, 'the last one')).id;
    })();
    const [got] = await Promise.all([hop(root, start, 1, () => last), writer]);
    const changes = await log(start, got.at(-1)!.seq);
    assert.deepEqual(got, readableReplay(changes, root));
    assert.ok(!got.some((e) => e.event === 'read-marker.updated'));
    assert.equal(changes.filter((c) => c.kind === 'read-marker.updated').length, 2);
  });

  it(
    'a quiet ?room= stream of a name that becomes a private room ends; reconnecting is a 403',
    { skip },
    async () => {
      const room = unique('not-yet');
      // Not a room yet: a quiet stream, not a 404.
      const carols = [
        await stream(2, carol, `?room=${room}`),
        await stream(3, carol, `?room=${room}`),
      ];
      const bobs = await stream(3, bob, `?room=${room}`);
      for (const client of [...carols, bobs]) assert.equal(client.status, 200);
      await call(1, ada, 'PUT', `/api/rooms/${room}`, { visibility: 'private' }, 201);
      await call(1, ada, 'PUT', `/api/rooms/${room}/members/bob`, {}, 201);
      const message = await post(1, ada, room, 'members only');
      for (const client of carols) {
        await client.waitFor((c) => c.ended, 'carol’s stream to end');
        assert.deepEqual(received(client), []);
      }
      for (const n of [1, 2, 3]) {
        assert.equal((await stream(n, carol, `?room=${room}`)).status, 403, `instance ${n}`);
      }
      // Bob became a member right after it came into being: his stream may have ended in
      // between (for a moment he could not read the room); from its last id he resumes, no gap.
      const hasMessage = (c: SseClient) => received(c).some((e) => e.data.id === message.id);
      await bobs.waitFor((c) => hasMessage(c) || c.ended, 'the message or the end');
      if (!hasMessage(bobs)) {
        assert.match(bobs.lastEventId, /^\d+$/, 'an id to resume from');
        const again = await stream(2, bob, `?room=${room}`, { 'last-event-id': bobs.lastEventId });
        assert.equal(again.status, 200);
        await again.waitFor(hasMessage, 'the message after resuming');
        const rest = await log(Number(bobs.lastEventId), Number.MAX_SAFE_INTEGER);
        assert.deepEqual(received(again), rest.filter((c) => c.room === room).map(asReceived));
      }
    },
  );

  it(
    'resumes after access changes made through other instances: exactly what each may read',
    { skip },
    () => replayAfterAccessChanges(instances, { ada, bob, carol, root }),
  );

  it(
    'access changes through every instance while readers replay and go live, hopping',
    { skip },
    () => accessChangesWhileReading(instances, { ada, bob, carol, root }),
  );
});
