/**
 * Every write to a room, raced against the writer losing access to it
 * (removed from a private room; the room made private), on every engine
 * (access-loss-race.ts): a write commits before the loss or is refused as
 * the contract says (a post 403, a write to a message by id or to its
 * reactions 404, a read marker 403). The access rule is judged again inside
 * the write's transaction: judged only before it, a write checked just
 * before the loss committed just after it.
 */
import { it } from 'node:test';
import { AUTH } from '../auth/tokens.ts';
import { eachEngine } from '../http/http-contract.ts';
import { reactionPath } from '../reactions/reactions-support.ts';
import { madePrivate, raceAccessLoss, removal, type RaceWrite } from './access-loss-race.ts';
import { markerPath } from './rooms-support.ts';

const ROUNDS = 64;

const forbidden = { status: 403, type: 'forbidden' };
const notFound = { status: 404, type: 'not-found' };

const writes: Record<string, RaceWrite> = {
  'a post': {
    change: 'message.created',
    ok: 201,
    refused: forbidden,
    prepare: async () => '',
    write: ({ bob, room }, _, round) =>
      bob.request('POST', '/api/messages', { content: `post ${round}`, room }),
  },
  'an edit of its own message': {
    change: 'message.updated',
    ok: 200,
    refused: notFound,
    prepare: async ({ bob, room }, round) => (await bob.post(room, `before ${round}`)).id,
    write: ({ bob }, id, round) =>
      bob.request('PUT', `/api/messages/${id}`, { content: `after ${round}` }),
  },
  'a delete of its own message': {
    change: 'message.deleted',
    ok: 200,
    refused: notFound,
    prepare: async ({ bob, room }, round) => (await bob.post(room, `doomed ${round}`)).id,
    write: ({ bob }, id) => bob.delete(`/api/messages/${id}`),
  },
  'a reaction': {
    change: 'reaction.added',
    ok: 201,
    refused: notFound,
    prepare: async ({ ada, room }, round) => (await ada.post(room, `react ${round}`)).id,
    write: ({ bob }, id) => bob.put(reactionPath(id, '👍', 'bob')),
  },
  'a read marker': {
    change: 'read-marker.updated',
    ok: 200,
    refused: forbidden,
    // Newer than the marker bob's (re)join set to the newest message.
    prepare: async ({ ada, room }, round) => (await ada.post(room, `read ${round}`)).id,
    write: ({ bob, room }, id) => bob.put(markerPath(room, 'bob'), { lastRead: id }),
  },
};

eachEngine(
  'a write to a room while the writer loses access to it',
  (engine, shared) => {
    for (const [lost, loss] of Object.entries({ removed: removal, 'made private': madePrivate })) {
      for (const [name, race] of Object.entries(writes)) {
        // raceAccessLoss asserts every round's answer and the change log's order.
        it(`${name}, ${lost}: commits before or is refused`, async (t) => {
          const outcome = await raceAccessLoss(shared(), loss, race, ROUNDS);
          t.diagnostic(
            `${engine.name}, ${lost}: ${outcome.succeeded} went through, ${outcome.refused} refused`,
          );
        });
      }
    }
  },
  AUTH,
);
