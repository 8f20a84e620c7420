/**
 * /metrics counts the change feed's followers (the streams' access view)
 * that failed to load again, and the count falls back to 0 by itself once a
 * load succeeds. /readyz stays 200 meanwhile: only the event streams of
 * signed-in non-admins wait for the view; every other request is served, and
 * a 503 would take them all out of a balancer. The store is real; one
 * change's data is made unreadable on its way to the feed (so the view fails
 * to apply it) and the view's snapshot read is refused on demand.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually } from '../events/event-helpers.ts';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { withWrappedStore, type ContractApp } from './http-contract.ts';

const POISON = 'poisoned-room';

async function unloadedGauge(app: ContractApp): Promise<number> {
  const text = (await app.inject({ url: '/metrics' })).body;
  const line = /^change_feed_followers_unloaded (\d+)$/m.exec(text);
  assert.ok(line, 'the gauge is exported');
  return Number(line[1]);
}

for (const engine of engines) {
  const skip = await skipUnlessEngine(engine);
  describe(`the change feed's access view cannot load [${engine.name}]`, { skip }, () => {
    it('the gauge is 1 while its load fails (the API is served, /readyz 200), 0 once it loads', async () => {
      let refuseSnapshot = false;
      let refused = 0;
      await withWrappedStore(
        engine,
        (real) => ({
          changes: {
            since: async (after, limit) =>
              (await real.changes.since(after, limit)).map((change) =>
                change.room === POISON && change.kind === 'room.created'
                  ? { ...change, data: '{not json' }
                  : change,
              ),
          },
          rooms: {
            accessSnapshot: async () => {
              if (refuseSnapshot) {
                refused += 1;
                throw new Error('snapshot refused');
              }
              return real.rooms.accessSnapshot();
            },
          },
        }),
        async (app) => {
          assert.equal(await unloadedGauge(app), 0);

          refuseSnapshot = true;
          const { store, feed } = app.t.app;
          await store.rooms.put(POISON, null, null, new Date().toISOString(), () => ({
            visibility: 'public',
            topic: '',
          }));
          feed.wake();
          let gauge = 0;
          const readGauge = async () => {
            gauge = await unloadedGauge(app);
          };
          await eventually(
            () => gauge === 1,
            'the gauge shows the view unloaded',
            10_000,
            readGauge,
          );
          await eventually(() => refused >= 2, 'its timer tries the load again (after 0.5 s)');
          assert.equal(await unloadedGauge(app), 1, 'still failing, still counted');
          assert.notEqual(feed.settling, undefined);
          assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
          const listed = await app.inject({ url: '/api/messages?limit=1' });
          assert.equal(listed.statusCode, 200, 'the API is served');

          refuseSnapshot = false;
          await eventually(() => gauge === 0, 'a later try loads the view', 10_000, readGauge);
          assert.equal(feed.settling, undefined);
        },
      );
    });
  });
}
