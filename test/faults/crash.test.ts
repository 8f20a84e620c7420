/**
 * Crash: clients write at high concurrency (create with and without
 * Idempotency-Key, edit, delete, and requests that must be refused); the
 * service is killed with SIGKILL at a random moment, restarted on the same
 * data, and checked, many times in a row. On PostgreSQL the service is
 * killed, never the database.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engines } from '../support/engines.ts';
import { skipUnless } from '../support/prerequisites.ts';
import { changeLogFromStream, sqliteIntegrity } from './support/change-log.ts';
import { FAULTS_SEED, scaled, seededRandom } from './support/fault-scale.ts';
import { reportFigures, sleep } from './support/fault-report.ts';
import { ensureStopped, startService, type ServiceProcess } from './support/service-process.ts';
import { WriteLedger } from './support/write-ledger.ts';

const CLIENTS = 16;
/** A claim left in flight by a killed process is free again within 30 s (docs/concepts.md, "Retried creates"). */
const CLAIM_EXPIRY_WAIT_MS = 40_000;

for (const engine of engines) {
  describe(`crash: SIGKILL under write load (${engine.name})`, async () => {
    const skip = skipUnless(!(await engine.unavailable()), `${engine.name} for the crash test`);
    const kills = engine.name === 'sqlite' ? scaled(12) : scaled(8);

    it(
      `keeps every acknowledged write through ${kills} kills`,
      { skip, timeout: 60_000 + kills * 20_000 },
      async (t) => {
        const db = await engine.createDatabase();
        const ledger = new WriteLedger(
          { noAnswer: 'unknown', storeErrors: 'anomaly' },
          `crash-${engine.name}-${FAULTS_SEED}`,
        );
        const random = seededRandom(`crash-${engine.name}`);
        const file = db.url.startsWith('sqlite:') ? db.url.slice('sqlite:'.length) : undefined;
        let service: ServiceProcess | undefined;
        let killed = 0;
        const integrity: string[] = [];
        const started = Date.now();
        try {
          for (let round = 0; ; round++) {
            service = await startService({ DATABASE_URL: db.url });
            await ledger.verify(service.url, changeLogFromStream);
            if (file !== undefined) integrity.push(sqliteIntegrity(file));
            assert.deepEqual(ledger.anomalies, [], `after kill ${killed}:\n${service.logTail()}`);
            if (round === kills) break;

            let stop = false;
            const clients = Array.from({ length: CLIENTS }, (_, i) =>
              ledger.runClient(
                service!.url,
                i,
                seededRandom(`crash-${engine.name}-${round}-${i}`),
                () => stop,
              ),
            );
            // Random moments: sometimes while the clients are still connecting, mostly mid-flow.
            await sleep(random() < 0.15 ? random() * 50 : 100 + random() * 1400);
            const exit = await service.kill();
            stop = true;
            assert.equal(exit.signal, 'SIGKILL');
            killed += 1;
            await Promise.all(clients);
          }
          // Creates whose first attempt died with the process may find their key still claimed
          // (409) until the claim expires; the client keeps retrying with the same key.
          const deadline = Date.now() + CLAIM_EXPIRY_WAIT_MS;
          while (ledger.unresolved > 0 && Date.now() < deadline) {
            await sleep(2000);
            await ledger.verify(service.url, changeLogFromStream);
          }
          assert.equal(ledger.unresolved, 0, 'every retried create got its answer');
          assert.deepEqual(ledger.anomalies, []);
          if (file !== undefined)
            assert.ok(
              integrity.every((r) => r === 'ok'),
              integrity.join(', '),
            );
          const exit = await service.terminate();
          assert.equal(exit.code, 0, service.logTail());
          assert.equal(ledger.figures.lost, 0);
          assert.equal(ledger.figures.duplicates, 0);
          assert.ok(ledger.figures.ackedWritesChecked > kills * 10, 'the load reached the store');
          reportFigures(t, `crash-${engine.name}`, {
            kills: killed,
            ...ledger.figures,
            integrityChecks: integrity.length,
            seconds: Math.round((Date.now() - started) / 1000),
          });
        } finally {
          await ensureStopped(service);
          await db.cleanup();
        }
      },
    );
  });
}
