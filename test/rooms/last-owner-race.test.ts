/**
 * A room's two owners removed at once, through the HTTP API on every engine:
 * exactly one removal goes through and the other is the 409 of the last
 * owner, in every round; never a room left with no owner. On PostgreSQL the
 * second removal waits for the room's lock and must then decide on the
 * memberships as the first one left them (not as they were before its wait).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Membership } from '../../src/domain/room.ts';
import { assertProblem, eachEngine, uniqueRoom } from '../http/http-contract.ts';

const ROUNDS = 60;

/** `fn` after `turns` turns of the event loop. */
async function later<T>(turns: number, fn: () => Promise<T>): Promise<T> {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
  return fn();
}

eachEngine('two owners removed at once', (engine, shared) => {
  it('one removal goes through, the other is the last owner 409, in every round', async (t) => {
    const app = shared();
    let firstWon = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const room = uniqueRoom();
      const made = await app.inject({
        method: 'PUT',
        url: `/api/rooms/${room}`,
        payload: { visibility: 'public' },
      });
      assert.equal(made.statusCode, 201, made.body);
      const put = async (subject: string) => {
        const response = await app.inject({
          method: 'PUT',
          url: `/api/rooms/${room}/members/${subject}`,
          payload: { role: 'owner' },
        });
        assert.equal(response.statusCode, 201, response.body);
      };
      await put('ann');
      await put('bob');
      const remove = (subject: string) =>
        app.inject({ method: 'DELETE', url: `/api/rooms/${room}/members/${subject}` });
      const [ann, bob] = await Promise.all([remove('ann'), later(round % 4, () => remove('bob'))]);
      const statuses = [ann.statusCode, bob.statusCode].sort();
      assert.deepEqual(statuses, [200, 409], `round ${round}: ${ann.body} ${bob.body}`);
      assertProblem(ann.statusCode === 409 ? ann : bob, 409, 'last-owner');
      if (ann.statusCode === 200) firstWon += 1;
      const members = await app.inject({ url: `/api/rooms/${room}/members?limit=10` });
      const owners = members.json<Membership[]>().filter((m) => m.role === 'owner');
      assert.equal(owners.length, 1, `round ${round}: ${members.body}`);
    }
    t.diagnostic(`${engine.name}: the first removal went through in ${firstWon} of ${ROUNDS}`);
  });
});
