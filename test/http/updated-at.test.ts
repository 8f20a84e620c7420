/**
 * Every change leaves a new `updatedAt`, also when the clock has not moved
 * (two changes in one millisecond) or went back: a stale `updatedAt` is a 409,
 * so a client that read the version before must never pass for current.
 * Run with a clock that stands still, on messages and on rooms.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import type { Room } from '../../src/domain/room.ts';
import { assertProblem, eachEngine, uniqueRoom, withApp } from './http-contract.ts';

const STILL = new Date('2026-11-25T06:00:00.000Z');

eachEngine('updatedAt moves with every change', (engine) => {
  it('a message edited in the same millisecond it was created', async () => {
    await withApp(
      engine,
      async (app) => {
        const message = await app.create({ room: uniqueRoom(), content: 'one' });
        assert.equal(message.updatedAt, STILL.toISOString());
        const url = `/api/messages/${message.id}`;
        const two = await app.inject({ method: 'PUT', url, payload: { content: 'two' } });
        assert.equal(two.statusCode, 200, two.body);
        const edited = two.json() as Message;
        assert.equal(edited.updatedAt, '2026-11-25T06:00:00.001Z');
        // The first read's updatedAt is stale now: a 409, not an overwrite.
        const stale = await app.inject({
          method: 'PUT',
          url,
          payload: { content: 'lost', updatedAt: message.updatedAt },
        });
        assertProblem(stale, 409, 'version-conflict');
        const three = await app.inject({
          method: 'PUT',
          url,
          payload: { content: 'three', updatedAt: edited.updatedAt },
        });
        assert.equal((three.json() as Message).updatedAt, '2026-11-25T06:00:00.002Z');
      },
      {},
      { now: () => STILL },
    );
  });

  it('a room updated twice in the same millisecond', async () => {
    await withApp(
      engine,
      async (app) => {
        const url = `/api/rooms/${uniqueRoom()}`;
        const created = await app.inject({ method: 'PUT', url, payload: { topic: 'a' } });
        assert.equal(created.statusCode, 201, created.body);
        const first = created.json() as Room;
        const updated = await app.inject({ method: 'PUT', url, payload: { topic: 'b' } });
        const second = updated.json() as Room;
        assert.equal(second.updatedAt, '2026-11-25T06:00:00.001Z');
        const stale = await app.inject({
          method: 'PUT',
          url,
          payload: { topic: 'c', updatedAt: first.updatedAt },
        });
        assertProblem(stale, 409, 'version-conflict');
        const stored = await app.inject({ method: 'GET', url });
        assert.equal((stored.json() as Room).updatedAt, second.updatedAt);
      },
      {},
      { now: () => STILL },
    );
  });
});
