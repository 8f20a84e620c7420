/**
 * /readyz answers 503 while what the instance keeps in step with the change
 * log (the streams' access view) failed to load and waits to be tried again,
 * and /metrics counts the followers not loaded; both recover by themselves
 * once a load succeeds. The store is real; one change's data is made
 * unreadable on its way to the feed (so the view fails to apply it) and the
 * view's snapshot read is refused on demand.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { assertProblem, withWrappedStore, type ContractApp } from './http-contract.ts';

const POISON = 'poisoned-room';

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (await condition()) return;
    await sleep(50);
  }
  assert.fail(`${what}: not within 10 s`);
}

async function unloadedGauge(app: ContractApp): Promise<number> {
  const text = (await app.inject({ url: '/metrics' })).body;
  const line = /^change_feed_followers_unloaded (\d+)$/m.exec(text);
  assert.ok(line, 'the gauge is exported');
  return Number(line[1]);
}

for (const engine of engines) {
  describe(
    `readiness while the change feed's access view cannot load [${engine.name}]`,
    {
      skip: await skipUnlessEngine(engine),
    },
    () => {
      it('503 with Retry-After and the gauge at 1 while its load fails; 200 and 0 once it loads', async () => {
        let refuseSnapshot = false;
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
                if (refuseSnapshot) throw new Error('snapshot refused');
                return real.rooms.accessSnapshot();
              },
            },
          }),
          async (app) => {
            assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
            assert.equal(await unloadedGauge(app), 0);

            refuseSnapshot = true;
            const { store, feed } = app.t.app;
            await store.rooms.put(POISON, null, null, new Date().toISOString(), () => ({
              visibility: 'public',
              topic: '',
            }));
            feed.wake();
            await until('/readyz answers 503', async () => {
              return (await app.inject({ url: '/readyz' })).statusCode === 503;
            });
            const notReady = await app.inject({ url: '/readyz' });
            assertProblem(notReady, 503, 'unavailable');
            assert.ok(notReady.headers['retry-after'], 'Retry-After on /readyz');
            assert.match(notReady.json<{ detail: string }>().detail, /change log/);
            assert.equal(await unloadedGauge(app), 1);
            assert.equal(
              (await app.inject({ url: '/healthz' })).statusCode,
              200,
              'alive all along',
            );

            refuseSnapshot = false;
            await until('/readyz answers 200 again', async () => {
              return (await app.inject({ url: '/readyz' })).statusCode === 200;
            });
            assert.equal(await unloadedGauge(app), 0);
          },
        );
      });
    },
  );
}
