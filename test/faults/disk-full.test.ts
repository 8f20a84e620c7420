/**
 * Full disk (SQLite): the database lives on a small tmpfs that the test
 * mounts, and the disk is filled up under write load. Writes must fail with
 * a clear 507 (or 503) problem, reads go on, nothing is corrupted, and writes
 * succeed again once space is freed, without a restart; and the data is
 * intact after a restart too.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { skipUnless } from '../support/prerequisites.ts';
import { changeLogFromStream, sqliteIntegrity } from './support/change-log.ts';
import { FAULTS_SEED, scaled, seededRandom } from './support/fault-scale.ts';
import { reportFigures, sleep } from './support/fault-report.ts';
import { call } from './support/http-call.ts';
import { ensureStopped, startService, type ServiceProcess } from './support/service-process.ts';
import { WriteLedger } from './support/write-ledger.ts';

const run = promisify(execFile);
/** Room for the data and a full WAL (1000 pages) once space is freed: the fillers take the rest. */
const DISK_MB = 32;
const CLIENTS = 6;
/** Large contents fill the disk quickly (the ledger's own contents are small). */
const BIG = ' x'.repeat(1900);

/** Writes a filler file until only `leaveBytes` are free (or the disk says ENOSPC); returns its path. */
function fillDisk(dir: string, name: string, leaveBytes = 0): string {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(16 * 1024, 1);
  const { bavail, bsize } = statfsSync(dir);
  const chunks = Math.max(0, Math.floor((bavail * bsize - leaveBytes) / chunk.length));
  try {
    for (let i = 0; i < (leaveBytes > 0 ? chunks : 10_000); i++) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return path;
}

describe('full disk (SQLite on a small tmpfs)', () => {
  const root = process.getuid?.() === 0;
  const skip = skipUnless(root, 'root (to mount a small tmpfs)');

  it(
    'refuses writes with 507 while the disk is full, keeps reading, and recovers when space is freed',
    { skip, timeout: 120_000 + scaled(4000) * 4 },
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'faults-disk-'));
      let mounted = false;
      let service: ServiceProcess | undefined;
      try {
        await run('mount', ['-t', 'tmpfs', '-o', `size=${DISK_MB}m`, 'tmpfs', dir]);
        mounted = true;
        const dbUrl = `sqlite:${join(dir, 'messages.db')}`;
        const file = join(dir, 'messages.db');
        service = await startService({ DATABASE_URL: dbUrl });
        const base = service.url;
        const ledger = new WriteLedger(
          { noAnswer: 'unknown', storeErrors: 'unknown' },
          `disk-${FAULTS_SEED}`,
        );
        const random = seededRandom('disk');

        // Some history first, then most of the space taken by a filler file.
        let stop = false;
        let clients = Array.from({ length: CLIENTS }, (_, i) =>
          ledger.runClient(base, i, seededRandom(`disk-before-${i}`), () => stop),
        );
        await sleep(1000);
        stop = true;
        await Promise.all(clients);
        const filler = fillDisk(dir, 'filler-1', 1024 * 1024);

        // Big messages from concurrent clients (so group commits fail mid-batch) until the
        // store runs out of space: every answer is a 201 or a 507/503 problem.
        const statuses = new Map<number, number>();
        let full = false;
        await Promise.all(
          Array.from({ length: 8 }, async (_, c) => {
            for (let i = 0; i < 500 && !full; i++) {
              const result = await ledger.createOne(base, `filler-${c}`, i % 2 === 0, random, BIG);
              assert.ok(result.answered, 'the service answers while the disk fills');
              statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
              if (result.status === 201) continue;
              assert.ok(
                [503, 507].includes(result.status),
                `a full disk is a 507 or 503: ${result.status} ${result.text}`,
              );
              assert.match(result.headers.get('content-type') ?? '', /^application\/problem\+json/);
              full = true;
            }
          }),
        );
        assert.ok(full, 'the disk filled up');
        // Whatever the big creates left, take it too: the disk is now really full.
        const filler2 = fillDisk(dir, 'filler-2');

        // While full: the ledger's clients write (every answer checked), and reads go on.
        stop = false;
        clients = Array.from({ length: CLIENTS }, (_, i) =>
          ledger.runClient(base, i, seededRandom(`disk-full-${i}`), () => stop),
        );
        const fullFor = Date.now() + scaled(3000);
        let reads = 0;
        while (Date.now() < fullFor) {
          const list = await call(base, 'GET', '/api/messages?limit=50&order=desc');
          assert.equal(
            list.answered && list.status,
            200,
            'lists are served while the disk is full',
          );
          const all = await call(base, 'GET', '/api/messages');
          assert.equal(
            all.answered && all.status,
            200,
            'the whole list is served while the disk is full',
          );
          reads += 2;
          await sleep(50);
        }
        stop = true;
        await Promise.all(clients);
        const refusedWhileFull = ledger.figures.answered507 + ledger.figures.answered503;
        assert.ok(refusedWhileFull > 0, 'writes were refused while the disk was full');
        assert.equal(service.child.exitCode, null, 'the service lives on');
        assert.equal(sqliteIntegrity(file), 'ok', 'nothing is corrupted while full');
        const free = statfsSync(dir);
        const freeWhileFull = free.bavail * free.bsize;

        // Space is freed: writes succeed again, no restart.
        rmSync(filler);
        rmSync(filler2);
        const freedAt = performance.now();
        let recoveredMs: number | undefined;
        while (recoveredMs === undefined && performance.now() - freedAt < 10_000) {
          const created = await ledger.createOne(base, 'after-freeing', random() < 0.5, random);
          if (created.answered && created.status === 201) recoveredMs = performance.now() - freedAt;
          else await sleep(50);
        }
        assert.ok(recoveredMs !== undefined, 'writes succeed again once space is freed');
        stop = false;
        clients = Array.from({ length: CLIENTS }, (_, i) =>
          ledger.runClient(base, i, seededRandom(`disk-after-${i}`), () => stop),
        );
        await sleep(1000);
        stop = true;
        await Promise.all(clients);
        await ledger.verify(base, changeLogFromStream);
        assert.deepEqual(ledger.anomalies, [], service.logTail());
        assert.equal(ledger.unresolved, 0, ledger.describeUnresolved());
        assert.equal(sqliteIntegrity(file), 'ok');

        // Stopped while the disk is full again (the final checkpoint cannot grow the file):
        // still a clean stop, and after a restart with space, everything is still there.
        const filler3 = fillDisk(dir, 'filler-3');
        assert.equal((await service.terminate()).code, 0, service.logTail());
        assert.equal(sqliteIntegrity(file), 'ok');
        rmSync(filler3);
        service = await startService({ DATABASE_URL: dbUrl });
        await ledger.verify(service.url, changeLogFromStream);
        assert.deepEqual(ledger.anomalies, [], service.logTail());
        assert.equal(sqliteIntegrity(file), 'ok');
        assert.equal((await service.terminate()).code, 0, service.logTail());

        reportFigures(t, 'disk-full', {
          diskMb: DISK_MB,
          fillerStatuses: Object.fromEntries(statuses),
          freeBytesWhileFull: freeWhileFull,
          readsWhileFull: reads,
          recoveredAfterFreeingMs: Math.round(recoveredMs!),
          ...ledger.figures,
        });
      } finally {
        await ensureStopped(service);
        if (mounted) await run('umount', ['-l', dir]).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
