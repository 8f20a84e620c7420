/**
 * reaction.added and reaction.removed over a real socket (SSE), on every
 * engine: their data (the reaction), in the one change sequence, nothing for
 * a PUT that changes nothing nor for the reactions a message's delete takes
 * along; with auth on, delivered to the streams whose subject may read the
 * room and to no other.
 *
 * "Nothing arrives" is never a timed wait: a later change the stream must
 * receive (a sentinel) proves that every earlier one was delivered or skipped.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import type { Reaction } from '../../src/domain/reaction.ts';
import { AUTH } from '../auth/tokens.ts';
import { assertStrictlyIncreasing } from '../events/event-helpers.ts';
import { before, sentinel, sentinelIn, streams } from '../events/caller-streams.ts';
import { received, type Received } from '../events/room-access-support.ts';
import type { SseClient } from '../events/sse-client.ts';
import { eachEngine, uniqueRoom } from '../http/http-contract.ts';
import { callerFor } from '../rooms/rooms-support.ts';
import { privateScene, react, reactionPath } from './reactions-support.ts';

/** The reaction events before the sentinel. */
function reactionsBefore(client: SseClient, mark: Message): Received[] {
  return before(client, mark).filter((e) => e.event.startsWith('reaction.'));
}

const HEARTBEAT_MS = 100;

eachEngine(
  'reaction events (auth off)',
  (_engine, shared) => {
    const open = streams(shared);

    it('added and removed carry the reaction; a no-op PUT and a message’s delete add none', async () => {
      const ada = await callerFor(shared(), false, 'ada');
      const bob = await callerFor(shared(), false, 'bob');
      const room = uniqueRoom();
      const message = await ada.post(room, 'react');
      const stream = await open(ada, `/api/events?room=${room}`);
      const thumbs = await react(ada, message.id, '👍');
      await react(ada, message.id, '👍', 200); // no-op: no event
      const party = await react(bob, message.id, '🎉');
      const removed = await ada.delete(reactionPath(message.id, '👍', 'ada'));
      assert.equal(removed.statusCode, 200);
      assert.equal((await ada.delete(`/api/messages/${message.id}`)).statusCode, 200);
      const last = await ada.post(room, 'last');
      await stream.waitFor((c) => received(c).some((e) => e.data.id === last.id), 'the last');
      const got = received(stream);
      assert.deepEqual(
        got.map((e) => e.event),
        [
          'reaction.added',
          'reaction.added',
          'reaction.removed',
          'message.deleted',
          'message.created',
        ],
        'the party reaction goes with the message, without an event',
      );
      assertStrictlyIncreasing(
        got.map((e) => e.seq),
        'ids',
      );
      assert.deepEqual(got[0]!.data, thumbs);
      assert.deepEqual(got[1]!.data, party);
      assert.deepEqual(got[2]!.data, removed.json<Reaction>());
      assert.deepEqual(got[3]!.data, message, 'the message is unchanged by its reactions');
    });
  },
  { eventsHeartbeatMs: HEARTBEAT_MS },
);

eachEngine(
  'reaction events (auth on)',
  (_engine, shared) => {
    const open = streams(shared);
    const as = (sub: string, admin = false) => callerFor(shared(), true, sub, admin);

    it('reach the streams of those who may read the room, and no non-member of a private room', async () => {
      const { ada, bob, carol, root, hidden, secret, open: public_ } = await privateScene(as);
      const adaAll = await open(ada);
      const carolAll = await open(carol);
      const carolRoom = await open(carol, `/api/events?room=${hidden}`);
      const rootAll = await open(root);
      const bobAll = await open(bob);
      const added = await react(carol, secret.id, '👍');
      const removed = await ada.delete(reactionPath(secret.id, '👍', 'carol'));
      assert.equal(removed.statusCode, 403, 'not ada’s to remove');
      const gone = await root.delete(reactionPath(secret.id, '👍', 'carol'));
      assert.equal(gone.statusCode, 200, gone.body);
      const visible = await react(bob, public_.id, '🎉');
      const mark = await sentinel(ada, adaAll, carolAll, rootAll, bobAll);
      const expectedHidden = [
        { event: 'reaction.added', data: added },
        { event: 'reaction.removed', data: gone.json<Reaction>() },
      ];
      const expectedPublic = { event: 'reaction.added', data: visible };
      for (const client of [adaAll, carolAll, rootAll]) {
        assert.deepEqual(
          reactionsBefore(client, mark).map(({ event, data }) => ({ event, data })),
          [...expectedHidden, expectedPublic],
        );
      }
      assert.deepEqual(
        reactionsBefore(bobAll, mark).map(({ event, data }) => ({ event, data })),
        [expectedPublic],
        'nothing of the private room reaches a non-member',
      );
      // A mark in the room itself: everything the room's stream got before it, and nothing else.
      const roomMark = await sentinelIn(hidden, carol, carolRoom);
      assert.deepEqual(
        reactionsBefore(carolRoom, roomMark).map(({ event, data }) => ({ event, data })),
        expectedHidden,
      );
      assert.deepEqual(
        received(carolRoom)
          .filter((e) => e.event.startsWith('reaction.'))
          .map(({ event, data }) => ({ event, data })),
        expectedHidden,
      );
    });
  },
  { ...AUTH, eventsHeartbeatMs: HEARTBEAT_MS },
);
