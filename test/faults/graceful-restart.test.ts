/**
 * Graceful restart under load: SIGTERM while clients write and follow the
 * event stream, then the next instance takes over (on PostgreSQL it is
 * already running: a rolling restart; a SQLite file belongs to one process,
 * so there the next one starts when the first has exited).
 *
 * "No in-flight request fails" means, precisely:
 * - every request the stopping instance received is processed and answered
 *   with its normal answer (2xx, or the 4xx it deserves): never a 5xx, never
 *   a connection closed under it;
 * - a request it did not receive (connection refused after the listener
 *   closed, or sent on an idle keep-alive connection as that was closed) had
 *   no effect at all: the ledger holds every such write to "did not happen";
 * - /readyz answers 503 from the signal on, the process exits with code 0;
 * - event streams end cleanly (at an event boundary), and a client that
 *   reconnects to the next instance with its Last-Event-ID gets every change
 *   after it, once, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engines } from '../support/engines.ts';
import { skipUnless } from '../support/prerequisites.ts';
import { changeLogFromStream, sqliteIntegrity } from './support/change-log.ts';
import { FAULTS_SEED, scaled, seededRandom } from './support/fault-scale.ts';
import { reportFigures, sleep } from './support/fault-report.ts';
import { call } from './support/http-call.ts';
import { ensureStopped, startService, type ServiceProcess } from './support/service-process.ts';
import { StreamFollower } from './support/stream-follower.ts';
import { WriteLedger } from './support/write-ledger.ts';

const CLIENTS = 12;
const FOLLOWERS = 3;
/** /readyz says 503 this long before the listener closes (SHUTDOWN_DRAIN_MS). */
const DRAIN_MS = 300;

async function latestSeq(base: string): Promise<number> {
  const listed = await call(base, 'GET', '/api/messages?limit=1');
  assert.ok(listed.answered && listed.status === 200, 'the list answers');
  return Number(listed.headers.get('event-seq'));
}

for (const engine of engines) {
  describe(`graceful restart under load (${engine.name})`, async () => {
    const skip = skipUnless(!(await engine.unavailable()), `${engine.name} for the restart test`);
    const restarts = scaled(3);

    it(
      `loses nothing and fails no request through ${restarts} restarts`,
      { skip, timeout: 60_000 + restarts * 30_000 },
      async (t) => {
        const db = await engine.createDatabase();
        const env = { DATABASE_URL: db.url, SHUTDOWN_DRAIN_MS: String(DRAIN_MS) };
        const rolling = engine.name === 'postgres';
        const ledger = new WriteLedger(
          { noAnswer: 'refused', storeErrors: 'anomaly' },
          `restart-${engine.name}-${FAULTS_SEED}`,
        );
        const file = db.url.startsWith('sqlite:') ? db.url.slice('sqlite:'.length) : undefined;
        const followers: StreamFollower[] = [];
        const services: ServiceProcess[] = [];
        const shutdownMs: number[] = [];
        let readyzRefusals = 0;
        try {
          let current = await startService(env);
          services.push(current);
          const since = await latestSeq(current.url);
          for (let f = 0; f < FOLLOWERS; f++) {
            const follower = new StreamFollower(since);
            await follower.connect(current.url);
            followers.push(follower);
          }

          for (let round = 0; round < restarts; round++) {
            const base = current.url;
            let stop = false;
            const clients = Array.from({ length: CLIENTS }, (_, i) =>
              ledger.runClient(
                base,
                i,
                seededRandom(`restart-${engine.name}-${round}-${i}`),
                () => stop,
              ),
            );
            await sleep(800);
            const next = rolling ? await startService(env) : undefined;

            const signalled = performance.now();
            const exit = current.terminate();
            // /readyz turns 503 first, while requests are still being served. Asked until it
            // does (or the listener is gone): on a busy machine the signal may take a while to
            // be handled, and the 503 then lasts SHUTDOWN_DRAIN_MS.
            for (let i = 0; i < 250; i++) {
              const ready = await call(base, 'GET', '/readyz');
              if (!ready.answered) break;
              if (ready.status === 503) {
                readyzRefusals += 1;
                break;
              }
              await sleep(20);
            }
            const { code } = await exit;
            shutdownMs.push(Math.round(performance.now() - signalled));
            assert.equal(code, 0, `a graceful stop exits with 0:\n${current.logTail()}`);
            stop = true;
            await Promise.all(clients);
            for (const follower of followers) {
              assert.deepEqual(
                await follower.current!.ended,
                { how: 'clean' },
                'the stream ended cleanly',
              );
            }

            current = next ?? (await startService(env));
            services.push(current);
            await ledger.verify(current.url, changeLogFromStream);
            assert.deepEqual(ledger.anomalies, [], `after restart ${round + 1}`);
            if (file !== undefined) assert.equal(sqliteIntegrity(file), 'ok');
            // The followers come back (Last-Event-ID) to the next instance.
            for (const follower of followers) await follower.connect(current.url);
          }

          // A last burst on the final instance, then every follower must have every change once.
          let stop = false;
          const clients = Array.from({ length: CLIENTS }, (_, i) =>
            ledger.runClient(
              current.url,
              i,
              seededRandom(`restart-${engine.name}-last-${i}`),
              () => stop,
            ),
          );
          await sleep(500);
          stop = true;
          await Promise.all(clients);
          await ledger.verify(current.url, changeLogFromStream);
          assert.deepEqual(ledger.anomalies, []);
          assert.equal(ledger.unresolved, 0, ledger.describeUnresolved());
          const latest = await latestSeq(current.url);
          const log = await changeLogFromStream(current.url, latest);
          for (const follower of followers) {
            await follower.catchUp(current.url, latest, 20_000);
            assert.deepEqual(follower.differences(log), [], 'no gap, no duplicate across restarts');
          }
          assert.equal(readyzRefusals, restarts, '/readyz said 503 after every signal');
          assert.equal((await current.terminate()).code, 0, current.logTail());

          reportFigures(t, `graceful-restart-${engine.name}`, {
            restarts,
            rolling,
            shutdownMs,
            streamReconnects: followers.reduce((n, f) => n + f.reconnects, 0),
            eventsPerFollower: followers[0]!.events.length,
            ...ledger.figures,
          });
        } finally {
          for (const follower of followers) follower.close();
          for (const service of services) await ensureStopped(service);
          await db.cleanup();
        }
      },
    );
  });
}
