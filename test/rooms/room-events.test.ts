/**
 * Room, membership and read-marker events over a real socket (SSE), on every
 * engine: their kinds and data; with auth on, access filtering when a change
 * is delivered: markers reach only their subject, a member.removed reaches
 * the removed subject, a room.updated that makes a room private reaches its
 * previous readers, a ?room= stream ends when its subject loses access (and
 * reconnecting is a 403), and nothing of a private room reaches a non-member.
 *
 * "Nothing arrives" is never a timed wait: a later change the stream must
 * receive (a sentinel) proves that every earlier one was delivered or skipped.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Membership, ReadMarker } from '../../src/domain/room.ts';
import { AUTH } from '../auth/tokens.ts';
import { assertStrictlyIncreasing } from '../events/event-helpers.ts';
import { before, sentinel, streams } from '../events/caller-streams.ts';
import { received } from '../events/room-access-support.ts';
import type { SseClient } from '../events/sse-client.ts';
import { eachEngine, uniqueRoom } from '../http/http-contract.ts';
import { callerFor, memberPath } from './rooms-support.ts';

const HEARTBEAT_MS = 100;

/** A marker as read-marker.updated carries it. */
function withoutUnread(marker: ReadMarker): Omit<ReadMarker, 'unread'> {
  return {
    room: marker.room,
    subject: marker.subject,
    lastRead: marker.lastRead,
    version: marker.version,
  };
}

eachEngine(
  'room events (auth off)',
  (_engine, shared) => {
    const open = streams(shared);

    it('room, member and marker changes: kinds and data, no event for a no-op', async () => {
      const anyone = await callerFor(shared(), false, 'ada');
      const name = uniqueRoom();
      const stream = await open(anyone, `/api/events?room=${name}`);
      assert.equal(stream.status, 200);
      const created = await anyone.putRoom(name, { topic: 'one' });
      const updated = await anyone.putRoom(name, { topic: 'two' });
      await anyone.putRoom(name, { topic: 'two' }); // no-op
      const added = await anyone.putMember(name, 'bob');
      const promoted = await anyone.putMember(name, 'bob', { role: 'owner' });
      await anyone.putMember(name, 'bob', { role: 'owner' }); // no-op
      const message = await anyone.post(name, 'hello');
      // Changes of other rooms stay out of a ?room= stream.
      await anyone.post(uniqueRoom(), 'elsewhere');
      await anyone.putRoom(uniqueRoom());
      const bob = await callerFor(shared(), false, 'bob');
      const marker = await bob.setMarker(name, message.id);
      await bob.setMarker(name, message.id); // no-op
      await anyone.putMember(name, 'carol', { role: 'owner' });
      const removed = await anyone.delete(memberPath(name, 'bob'));
      assert.equal(removed.statusCode, 200);
      const last = await anyone.putRoom(name, { topic: 'three' });
      await stream.waitFor(
        (c) => received(c).some((e) => e.event === 'room.updated' && e.data.topic === 'three'),
        'the last update',
      );
      const got = received(stream);
      assert.deepEqual(
        got.map((e) => e.event),
        [
          'room.created',
          'room.updated',
          'member.added',
          'member.updated',
          'message.created',
          'read-marker.updated',
          'member.added',
          'member.removed',
          'room.updated',
        ],
      );
      assertStrictlyIncreasing(
        got.map((e) => e.seq),
        'ids',
      );
      assert.deepEqual(got[0]!.data, created);
      assert.deepEqual(got[1]!.data, updated);
      assert.deepEqual(got[2]!.data, added);
      assert.deepEqual(got[3]!.data, promoted);
      assert.deepEqual(got[4]!.data, message);
      assert.deepEqual(got[5]!.data, withoutUnread(marker), 'the marker without unread');
      assert.deepEqual(
        got[7]!.data,
        { ...promoted, removedBy: null },
        'removedBy null with auth off',
      );
      assert.deepEqual(got[8]!.data, last);
    });

    it('an unfiltered stream carries room events of every room, private ones too', async () => {
      const anyone = await callerFor(shared(), false, 'ada');
      const stream = await open(anyone);
      const name = uniqueRoom();
      await anyone.putRoom(name, { visibility: 'private' });
      await anyone.putMember(name, 'bob');
      const mark = await sentinel(anyone, stream);
      const kinds = before(stream, mark)
        .filter((e) => e.data.room === name || e.data.name === name)
        .map((e) => e.event);
      assert.deepEqual(kinds, ['room.created', 'member.added']);
    });
  },
  { eventsHeartbeatMs: HEARTBEAT_MS },
);

eachEngine(
  'room events (auth on)',
  (_engine, shared) => {
    const open = streams(shared);
    const as = (sub: string, admin = false) => callerFor(shared(), true, sub, admin);

    it('a room created by PUT: room.created then member.added (the owner)', async () => {
      const ada = await as('ada');
      const name = uniqueRoom();
      const stream = await open(ada, `/api/events?room=${name}`);
      const room = await ada.putRoom(name);
      await stream.waitFor((c) => received(c).length >= 2, 'two events');
      const [first, second] = received(stream);
      assert.equal(first!.event, 'room.created');
      assert.deepEqual(first!.data, room);
      assert.equal(second!.event, 'member.added');
      assert.deepEqual(second!.data, await ada.read<Membership>(memberPath(name, 'ada')));
    });

    it('member.removed names who removed it: the subject itself when it left', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const name = uniqueRoom();
      await ada.putRoom(name);
      const stream = await open(ada, `/api/events?room=${name}`);
      const joined = await bob.putMember(name, 'bob');
      await bob.delete(memberPath(name, 'bob'));
      const again = await ada.putMember(name, 'bob');
      await ada.delete(memberPath(name, 'bob'));
      await stream.waitFor(
        (c) => received(c).filter((e) => e.event === 'member.removed').length === 2,
        'two removals',
      );
      const removals = received(stream).filter((e) => e.event === 'member.removed');
      assert.deepEqual(removals[0]!.data, { ...joined, removedBy: 'bob' });
      assert.deepEqual(removals[1]!.data, { ...again, removedBy: 'ada' });
    });

    it('a read marker reaches only its subject’s streams (not the room’s others, not admins)', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const root = await as('root', true);
      const name = uniqueRoom();
      const message = await ada.post(name, 'read me');
      const bobAll = await open(bob);
      const bobRoom = await open(bob, `/api/events?room=${name}`);
      const adaAll = await open(ada);
      const adaRoom = await open(ada, `/api/events?room=${name}`);
      const rootAll = await open(root);
      const marker = await bob.setMarker(name, message.id);
      const last = await ada.post(name, 'after the marker');
      const hasLast = (c: SseClient) => received(c).some((e) => e.data.id === last.id);
      for (const client of [bobAll, bobRoom, adaAll, adaRoom, rootAll]) {
        await client.waitFor(hasLast, 'the message after the marker');
      }
      const data = withoutUnread(marker);
      for (const client of [bobAll, bobRoom]) {
        const markers = received(client).filter((e) => e.event === 'read-marker.updated');
        assert.deepEqual(
          markers.map((e) => e.data),
          [data],
        );
      }
      for (const client of [adaAll, adaRoom, rootAll]) {
        assert.ok(!received(client).some((e) => e.event === 'read-marker.updated'));
      }
    });

    it('a removed member’s stream gets its member.removed, then nothing more of the private room', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const name = uniqueRoom();
      await ada.putRoom(name, { visibility: 'private' });
      await ada.putMember(name, 'bob');
      const stream = await open(bob);
      const seen = await ada.post(name, 'while bob is in');
      await stream.waitFor((c) => received(c).some((e) => e.data.id === seen.id), 'the message');
      await ada.delete(memberPath(name, 'bob'));
      const unseen = await ada.post(name, 'after bob left');
      await ada.putRoom(name, { topic: 'bob is gone' });
      const mark = await sentinel(ada, stream);
      const got = before(stream, mark).filter((e) => e.data.room === name || e.data.name === name);
      assert.deepEqual(
        got.map((e) => e.event),
        ['message.created', 'member.removed'],
      );
      assert.equal(got[1]!.data.subject, 'bob');
      assert.equal(got[1]!.data.removedBy, 'ada');
      assert.ok(!received(stream).some((e) => e.data.id === unseen.id));
    });

    it('a room.updated that makes a room private reaches its previous readers, then nothing more', async () => {
      const ada = await as('ada');
      const eve = await as('eve');
      const name = uniqueRoom();
      await ada.putRoom(name);
      const stream = await open(eve);
      const visible = await ada.post(name, 'public for now');
      await stream.waitFor((c) => received(c).some((e) => e.data.id === visible.id), 'the message');
      const closed = await ada.putRoom(name, { visibility: 'private' });
      await ada.post(name, 'private now');
      await ada.putRoom(name, { topic: 'secret topic' });
      await ada.putMember(name, 'bob');
      const mark = await sentinel(ada, stream);
      const got = before(stream, mark).filter((e) => e.data.room === name || e.data.name === name);
      assert.deepEqual(
        got.map((e) => e.event),
        ['message.created', 'room.updated'],
      );
      assert.deepEqual(got[1]!.data, closed);
      // Making it public again is not news to those who cannot read it yet... but then they can.
      const reopened = await ada.putRoom(name, { visibility: 'public' });
      await stream.waitFor(
        (c) =>
          received(c).some(
            (e) => e.event === 'room.updated' && e.data.version === reopened.version,
          ),
        'the room opened again',
      );
    });

    it('a ?room= stream ends after the change that took its subject’s access; reconnecting is a 403', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const eve = await as('eve');
      const name = uniqueRoom();
      await ada.putRoom(name);
      await ada.putMember(name, 'bob');
      const bobs = await open(bob, `/api/events?room=${name}`);
      const eves = await open(eve, `/api/events?room=${name}`);
      const first = await ada.post(name, 'hello both');
      for (const client of [bobs, eves]) {
        await client.waitFor((c) => received(c).some((e) => e.data.id === first.id), 'hello');
      }
      // Public to private: eve (not a member) loses access, bob keeps it.
      const closed = await ada.putRoom(name, { visibility: 'private' });
      await eves.waitFor((c) => c.ended, 'eve’s stream to end');
      assert.deepEqual(received(eves).at(-1)?.data, closed);
      assert.equal(received(eves).at(-1)?.event, 'room.updated');
      // Another local address: a socket of its own, not one the agent kept from the ended stream.
      const again = await open(eve, `/api/events?room=${name}`, '127.0.0.3');
      assert.equal(again.status, 403);
      // Bob is removed: his stream gets that change, then ends.
      await ada.delete(memberPath(name, 'bob'));
      await bobs.waitFor((c) => c.ended, 'bob’s stream to end');
      const lastOfBob = received(bobs).at(-1);
      assert.equal(lastOfBob?.event, 'member.removed');
      assert.equal(lastOfBob?.data.subject, 'bob');
      assert.ok(
        received(bobs).some((e) => e.data.id === closed.name || e.data.name === closed.name),
      );
      const bobAgain = await open(bob, `/api/events?room=${name}`, '127.0.0.4');
      assert.equal(bobAgain.status, 403);
      assert.match(await bobAgain.body(), /403/);
    });

    it('a member who leaves: its ?room= stream of a private room ends', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const name = uniqueRoom();
      await ada.putRoom(name, { visibility: 'private' });
      await ada.putMember(name, 'bob');
      const stream = await open(bob, `/api/events?room=${name}`);
      assert.equal(stream.status, 200);
      await bob.delete(memberPath(name, 'bob'));
      await stream.waitFor((c) => c.ended, 'the stream to end');
      assert.deepEqual(received(stream).at(-1)?.data.removedBy, 'bob');
    });

    it('nothing of a private room reaches a non-member; members and admins get it all', async () => {
      const ada = await as('ada');
      const bob = await as('bob');
      const eve = await as('eve');
      const root = await as('root', true);
      const eves = await open(eve);
      const roots = await open(root);
      const bobs = await open(bob);
      const name = uniqueRoom();
      await ada.putRoom(name, { visibility: 'private' });
      await ada.putMember(name, 'bob');
      const message = await ada.post(name, 'secret');
      await bob.post(name, 'secret too');
      const edit = await ada.request('PUT', `/api/messages/${message.id}`, { content: 'edited' });
      assert.equal(edit.statusCode, 200);
      await ada.putRoom(name, { topic: 'still secret' });
      await ada.putMember(name, 'bob', { role: 'owner' });
      await ada.setMarker(name, message.id);
      await ada.putMember(name, 'carol');
      await ada.delete(memberPath(name, 'carol'));
      const removed = await ada.request('DELETE', `/api/messages/${message.id}`);
      assert.equal(removed.statusCode, 200);
      // A message in a public room and its stream stay visible to eve.
      const mark = await sentinel(ada, eves, roots, bobs);
      const ofRoom = (c: SseClient) =>
        before(c, mark)
          .filter((e) => e.data.room === name || e.data.name === name)
          .map((e) => e.event);
      assert.deepEqual(ofRoom(eves), []);
      const everything = [
        'room.created',
        'member.added',
        'member.added',
        'message.created',
        'message.created',
        'message.updated',
        'room.updated',
        'member.updated',
        'member.added',
        'member.removed',
        'message.deleted',
      ];
      assert.deepEqual(ofRoom(roots), everything, 'admins: all but the marker');
      // Bob reads the room from his member.added on (its room.created and ada's membership came before).
      // Bob reads the room from his member.added on; the changes before it may reach him too when
      // they are delivered together with it (access is judged at delivery): a suffix, at least that.
      const bobGot = ofRoom(bobs);
      assert.ok(bobGot.length >= everything.length - 2, bobGot.join(' '));
      assert.deepEqual(bobGot, everything.slice(everything.length - bobGot.length));
      // A ?since= replay is filtered the same way.
      const seq = received(roots)[0]!.seq - 1;
      const replay = await open(eve, `/api/events?since=${seq}`);
      await sentinel(ada, replay);
      assert.ok(!received(replay).some((e) => e.data.room === name || e.data.name === name));
    });

    it('a private room’s ?room= stream answers 403 to a non-member and 200 to an admin', async () => {
      const ada = await as('ada');
      const eve = await as('eve');
      const root = await as('root', true);
      const name = uniqueRoom();
      await ada.putRoom(name, { visibility: 'private' });
      const refused = await open(eve, `/api/events?room=${name}`);
      assert.equal(refused.status, 403);
      const admin = await open(root, `/api/events?room=${name}`);
      assert.equal(admin.status, 200);
      const room = await ada.putRoom(name, { topic: 'seen by root' });
      await admin.waitFor(
        (c) => received(c).some((e) => e.data.version === room.version),
        'update',
      );
      assert.deepEqual(received(admin).at(-1)?.data, room);
    });
  },
  { ...AUTH, eventsHeartbeatMs: HEARTBEAT_MS },
);
