/**
 * Soak: a bounded mixed load (writes of every kind, reads, conditional
 * reads, pages, event streams that come and go, health and metrics) with the
 * service's memory and open file descriptors sampled from /proc. Flat means:
 * once the load stops and its connections are gone, the descriptors are back
 * to what they were before it (each request, stream or store connection that
 * leaked one would show), and resident memory in the last part of the run is
 * within a tolerant bound of what it was once warmed up.
 * FAULTS_SCALE stretches the run (20 s in CI, minutes with test:faults).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engines } from '../support/engines.ts';
import { skipUnless } from '../support/prerequisites.ts';
import { changeLogFromStream } from './support/change-log.ts';
import { openEventStream } from './support/event-stream-client.ts';
import { FAULTS_SEED, scaled, seededRandom } from './support/fault-scale.ts';
import { reportFigures, sleep } from './support/fault-report.ts';
import { call } from './support/http-call.ts';
import {
  ProcessSampler,
  establishedConnections,
  sampleProcess,
} from './support/process-sampler.ts';
import { ensureStopped, startService, type ServiceProcess } from './support/service-process.ts';
import { WriteLedger } from './support/write-ledger.ts';

const WRITERS = 6;
const READERS = 4;
const STREAMERS = 3;
/** Descriptors the service may hold after the load beyond its idle count (a WAL, timers' fds). */
const FD_SLACK = 4;
/** PostgreSQL connections per instance in this test: the pool may grow to it under load. */
const PG_POOL_SIZE = 6;
/** Resident memory may grow by this factor plus this much once warm (heap growth, caches). */
const RSS_FACTOR = 1.5;
const RSS_SLACK_KB = 40 * 1024;

/** Reads of every kind until `stop()`; returns how many were answered 200/304. */
async function reader(base: string, random: () => number, stop: () => boolean): Promise<number> {
  let served = 0;
  let etag: { id: string; etag: string } | undefined;
  while (!stop()) {
    const r = random();
    let result;
    if (r < 0.4) {
      result = await call(base, 'GET', `/api/messages?limit=50&order=${r < 0.2 ? 'desc' : 'asc'}`);
      if (result.answered && result.status === 200) {
        const page = JSON.parse(result.text) as { id: string; version: number }[];
        const pick = page[Math.floor(random() * page.length)];
        if (pick) etag = { id: pick.id, etag: `"${pick.version}"` };
      }
    } else if (r < 0.6 && etag !== undefined) {
      result = await call(base, 'GET', `/api/messages/${etag.id}`, {
        headers: { 'if-none-match': etag.etag },
      });
    } else if (r < 0.75) {
      result = await call(base, 'GET', '/api/messages?room=ops&limit=20');
    } else if (r < 0.85) {
      result = await call(base, 'GET', '/readyz');
    } else if (r < 0.9) {
      result = await call(base, 'GET', '/metrics');
    } else {
      result = await call(base, 'GET', `/api/messages/${crypto.randomUUID()}`);
      if (result.answered && result.status === 404) served += 1;
      continue;
    }
    assert.ok(result.answered, 'every read is answered');
    assert.ok([200, 304, 404].includes(result.status), `read answered ${result.status}`);
    served += 1;
  }
  return served;
}

/** Event streams that open, read a little and go away, until `stop()`; returns how many. */
async function streamer(base: string, random: () => number, stop: () => boolean): Promise<number> {
  let opened = 0;
  while (!stop()) {
    const listed = await call(base, 'GET', '/api/messages?limit=1');
    const seq = listed.answered ? Number(listed.headers.get('event-seq')) : 0;
    const query = random() < 0.3 ? `?since=${seq}&room=ops` : `?since=${Math.max(0, seq - 20)}`;
    const stream = await openEventStream(base, { query });
    assert.equal(stream.status, 200, 'streams open');
    opened += 1;
    await sleep(100 + random() * 900);
    stream.close();
  }
  return opened;
}

for (const engine of engines) {
  describe(`soak (${engine.name})`, async () => {
    const skip = skipUnless(!(await engine.unavailable()), `${engine.name} for the soak test`);
    const seconds = scaled(10);

    it(
      `keeps memory and file descriptors flat over ${seconds} s of mixed load`,
      { skip, timeout: 60_000 + seconds * 3000 },
      async (t) => {
        const db = await engine.createDatabase();
        let service: ServiceProcess | undefined;
        let sampler: ProcessSampler | undefined;
        try {
          service = await startService({
            DATABASE_URL: db.url,
            PG_POOL_SIZE: String(PG_POOL_SIZE),
          });
          const base = service.url;
          const ledger = new WriteLedger(
            { noAnswer: 'unknown', storeErrors: 'anomaly' },
            `soak-${engine.name}-${FAULTS_SEED}`,
          );

          // Warm up every path once (lazy modules, prepared statements, pool), then settle.
          let stop = false;
          const warm = [
            ledger.runClient(base, 99, seededRandom('soak-warm'), () => stop),
            reader(base, seededRandom('soak-warm-read'), () => stop),
            streamer(base, seededRandom('soak-warm-stream'), () => stop),
          ];
          await sleep(2000);
          stop = true;
          await Promise.all(warm);
          await sleep(1500);
          const port = Number(new URL(base).port);
          const idleBefore = {
            ...sampleProcess(service.pid),
            clients: establishedConnections(port),
          };

          sampler = new ProcessSampler(service.pid, 500);
          stop = false;
          const durationMs = seconds * 1000;
          const writers = Array.from({ length: WRITERS }, (_, i) =>
            // A client stops at its first unanswered request; in a soak there must be none.
            ledger.runClient(base, i, seededRandom(`soak-${engine.name}-w${i}`), () => stop),
          );
          const readers = Array.from({ length: READERS }, (_, i) =>
            reader(base, seededRandom(`soak-${engine.name}-r${i}`), () => stop),
          );
          const streamers = Array.from({ length: STREAMERS }, (_, i) =>
            streamer(base, seededRandom(`soak-${engine.name}-s${i}`), () => stop),
          );
          await sleep(durationMs);
          stop = true;
          await Promise.all(writers);
          const reads = (await Promise.all(readers)).reduce((a, b) => a + b, 0);
          const streamsOpened = (await Promise.all(streamers)).reduce((a, b) => a + b, 0);
          sampler.stop();
          await sleep(1500);
          const idleAfter = {
            ...sampleProcess(service.pid),
            clients: establishedConnections(port),
          };

          assert.equal(ledger.figures.noAnswer, 0, 'every request was answered');
          await ledger.verify(base, changeLogFromStream);
          assert.deepEqual(ledger.anomalies, []);

          const warmRss = sampler.medianRssKb(0, durationMs / 4);
          const endRss = sampler.medianRssKb((durationMs * 3) / 4, Number.POSITIVE_INFINITY);
          const peakFds = Math.max(...sampler.samples.map((s) => s.fds));
          // Descriptors other than the clients' (idle keep-alive) connections are back to idle.
          assert.ok(
            idleAfter.fds - idleAfter.clients <=
              idleBefore.fds -
                idleBefore.clients +
                FD_SLACK +
                (engine.name === 'postgres' ? PG_POOL_SIZE : 0),
            `open descriptors back to idle after the load: ${JSON.stringify({ idleBefore, idleAfter })}`,
          );
          assert.ok(
            endRss <= warmRss * RSS_FACTOR + RSS_SLACK_KB,
            `resident memory flat: ${warmRss} kB warm, ${endRss} kB at the end`,
          );
          assert.equal((await service.terminate()).code, 0, service.logTail());

          reportFigures(t, `soak-${engine.name}`, {
            seconds,
            writes: ledger.figures.ackedWrites,
            refused4xx: ledger.figures.refused4xx,
            reads: reads + ledger.figures.reads,
            streamsOpened,
            rssKb: {
              idleBefore: idleBefore.rssKb,
              warm: warmRss,
              end: endRss,
              idleAfter: idleAfter.rssKb,
            },
            fds: {
              idleBefore: idleBefore.fds,
              peak: peakFds,
              idleAfter: idleAfter.fds,
              clientConnectionsBefore: idleBefore.clients,
              clientConnectionsAfter: idleAfter.clients,
            },
            samples: sampler.samples.length,
          });
        } finally {
          sampler?.stop();
          await ensureStopped(service);
          await db.cleanup();
        }
      },
    );
  });
}
