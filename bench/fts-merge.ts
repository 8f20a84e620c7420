/**
 * A development measurement, in process, of the SQLite trigram index's merge
 * policy (migration 9): what a create costs, and what a search costs over the
 * segments the policy leaves. Not a goal of `npm run bench` (which measures
 * through HTTP): its output is kept as bench/results/fts-merge-<commit>.txt.
 *
 * It seeds `stored` messages of chat text (chat-text.ts) once, in large
 * transactions as the search bench does, under FTS5's default merge policy
 * (the structure an upgraded file starts from); the file stays in
 * bench/results/tmp. Then, for each policy, rounds interleaved, on a copy of
 * that file: sets FTS5's `automerge` and `crisismerge` and reads them back,
 * creates `creates` messages through the store, 20 to a group commit (each
 * batch submitted in one turn, as concurrent requests are), and takes the
 * process's CPU time and the wall time per create, and the most segments seen;
 * then times searches through the store's list: a rare word and rare +
 * common read the index; the common word alone fills its page from the walk.
 *
 * With `--http=<seconds>` it measures through HTTP instead, as `npm run bench`
 * does: on each copy the production build (`npm run build` first) serves
 * durable POSTs (SQLITE_SYNCHRONOUS=full, rate limits off, LOG_LEVEL=warn,
 * pinned to the server core) to wrk with bench/lua/create.lua at 50
 * connections for that long: a run long enough for the index's merging to
 * come due, which the bench's 5 s rounds on a fresh file are not. With
 * `--seed=bench` the stored messages are those `npm run bench` seeds
 * (seed-data.ts) rather than chat text.
 *
 * Usage: node --import tsx bench/fts-merge.ts [stored=1000000] [creates=300000] [rounds=3] [--http=<seconds>] [--seed=bench]
 */
import { execSync } from 'node:child_process';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { searchQuery } from '../src/domain/search-text.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { chatCorpus, wordNear } from './chat-text.ts';
import {
  copySqlite,
  removeSqlite,
  seedRows,
  sqliteMessageInserter,
  type SeedRow,
} from './seed-data.ts';
import { detectCores, freePort, pinned, SERVICE_SETTINGS, startServer } from './server-process.ts';
import { errorCount, requestsPerSecond, runWrk } from './wrk-runner.ts';

const ROOT = join(import.meta.dirname, '..');
const TMP = join(ROOT, 'bench', 'results', 'tmp');
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const httpFlag = process.argv.find((a) => a.startsWith('--http='));
const httpSeconds = httpFlag === undefined ? undefined : Number(httpFlag.slice('--http='.length));
/** `--seed=bench`: the stored messages are the bench's seed (seed-data.ts), not chat text. */
const benchSeed = process.argv.includes('--seed=bench');
const stored = Number(positional[0] ?? 1_000_000);
const creates = Number(positional[1] ?? 300_000);
const rounds = Number(positional[2] ?? 3);
type Policy = readonly [automerge: number, crisismerge: number];
const DEFAULTS: Policy = [4, 16];
const MIGRATION_9: Policy = [16, 64];
const BATCH = 20;
/** Segments are counted every this many group commits (and at the end). */
const SAMPLE_EVERY = 500;

const corpus = chatCorpus(stored + creates);
const rows = [...corpus.rows];
const rare = wordNear(corpus.documentFrequency, 100, 5)[0];
const common = wordNear(corpus.documentFrequency, (stored + creates) / 10, 3)[0];
const createRows = rows.slice(stored);

function setPolicy(file: string, [automerge, crisismerge]: Policy): void {
  const db = new Database(file);
  try {
    db.exec(`INSERT INTO message_search (message_search, rank) VALUES ('automerge', ${automerge})`);
    db.exec(
      `INSERT INTO message_search (message_search, rank) VALUES ('crisismerge', ${crisismerge})`,
    );
  } finally {
    db.close();
  }
}

function policyOf(db: Database.Database): string {
  const config = Object.fromEntries(
    db.prepare('SELECT k, v FROM message_search_config').raw().all() as [string, unknown][],
  );
  return `automerge=${String(config.automerge)} crisismerge=${String(config.crisismerge)}`;
}

/** The seeded file, made once; written under another name and renamed when whole. */
async function seededFile(): Promise<string> {
  const file = join(TMP, `fts-merge-${benchSeed ? 'bench-' : ''}${stored}.db`);
  if (existsSync(file)) return file;
  const partial = `${file}.partial`;
  removeSqlite(partial);
  const store = new SqliteStore({ filename: partial, synchronous: 'off' });
  await store.migrate();
  await store.close();
  setPolicy(partial, DEFAULTS);
  const db = new Database(partial);
  db.pragma('synchronous = OFF');
  const insert = sqliteMessageInserter(db);
  const fill = db.transaction((chunk: SeedRow[]) => chunk.forEach(insert));
  const seed = benchSeed ? [...seedRows(stored)] : rows.slice(0, stored);
  for (let i = 0; i < stored; i += 50_000) fill(seed.slice(i, i + 50_000));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  removeSqlite(file);
  renameSync(partial, file);
  return file;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(seeded: string, policy: Policy): Promise<string> {
  const file = join(TMP, 'fts-merge-work.db');
  try {
    copySqlite(seeded, file);
    setPolicy(file, policy);
    const store = new SqliteStore({ filename: file, synchronous: 'off' });
    await store.migrate();
    const check = new Database(file, { readonly: true });
    try {
      // Read back after migrate: what the creates below run under.
      const set = policyOf(check);
      const segments = check
        .prepare('SELECT count(DISTINCT segid) FROM message_search_idx')
        .pluck();
      let mostSegments = 0;
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0, commits = 0; i < createRows.length; i += BATCH, commits++) {
        await Promise.all(
          createRows.slice(i, i + BATCH).map((row) =>
            store.messages.create({
              id: uuidv7(),
              room: 'general',
              author: row.author,
              content: row.content,
              createdAt: new Date().toISOString(),
            }),
          ),
        );
        if (commits % SAMPLE_EVERY === 0) {
          mostSegments = Math.max(mostSegments, segments.get() as number);
        }
      }
      const wall = ((performance.now() - started) * 1000) / createRows.length;
      const used = process.cpuUsage(cpu);
      const cpuPerCreate = (used.user + used.system) / createRows.length;
      const atEnd = segments.get() as number;
      mostSegments = Math.max(mostSegments, atEnd);
      const searches: string[] = [];
      for (const [label, q] of [
        ['rare', rare],
        ['common (walk)', common],
        ['rare+common', `${rare} ${common}`],
      ] as const) {
        const times: number[] = [];
        for (let i = 0; i < 60; i++) {
          const t = performance.now();
          await store.messages.list({ q: searchQuery(q, false), order: 'desc', limit: 50 });
          times.push(performance.now() - t);
        }
        searches.push(`${label} ${median(times.slice(10)).toFixed(2)} ms`);
      }
      await store.close();
      return (
        `${set}: ${cpuPerCreate.toFixed(1)} µs CPU (${wall.toFixed(1)} µs wall) per create, ` +
        `segments ${atEnd} at the end (${mostSegments} at most); median search: ${searches.join(', ')}`
      );
    } finally {
      check.close();
    }
  } finally {
    removeSqlite(file);
  }
}

/** Durable creates through HTTP for `seconds` on a copy under `policy`. */
async function measureHttp(seeded: string, policy: Policy, seconds: number): Promise<string> {
  const file = join(TMP, 'fts-merge-work.db');
  const cores = detectCores(cpus().length);
  try {
    copySqlite(seeded, file);
    setPolicy(file, policy);
    const check = new Database(file, { readonly: true });
    const set = policyOf(check);
    check.close();
    const port = await freePort();
    const server = await startServer({
      name: 'fts-merge',
      command: pinned(cores, cores.server, ['node', 'dist/server.js']),
      env: {
        ...SERVICE_SETTINGS,
        DATABASE_URL: `sqlite:${file}`,
        PORT: String(port),
        SQLITE_SYNCHRONOUS: 'full',
      },
      port,
      readyPath: '/readyz',
      cwd: ROOT,
    });
    try {
      const cpu = server.cpuSeconds();
      const result = await runWrk(
        cores,
        { url: `${server.baseUrl}/api/messages`, script: 'create.lua', connections: 50, seconds },
        { lua: join(ROOT, 'bench', 'lua'), tmp: TMP },
      );
      const cpuPerCreate = ((server.cpuSeconds() - cpu) * 1e6) / result.requests;
      return (
        `${set}: ${Math.round(requestsPerSecond(result))} durable creates/s over ${seconds} s ` +
        `(${result.requests} in all, ${errorCount(result)} errors), ${cpuPerCreate.toFixed(1)} µs ` +
        `server CPU per create, p99 ${(result.latencyUs.p99 / 1000).toFixed(2)} ms`
      );
    } finally {
      await server.stop();
    }
  } finally {
    removeSqlite(file);
  }
}

const seeded = await seededFile();
const commit = execSync('git rev-parse --short=10 HEAD', { cwd: ROOT }).toString().trim();
const lines = [
  httpSeconds === undefined
    ? `bench/fts-merge.ts at ${commit}: ${stored} stored (seeded under FTS5's defaults), ` +
      `${creates} creates in group commits of ${BATCH}, synchronous=off; ` +
      `rare word "${rare}", common word "${common}"`
    : `bench/fts-merge.ts --http=${httpSeconds} at ${commit}: ${stored} stored ` +
      `(${benchSeed ? "the bench's seed" : 'chat text'}, seeded under FTS5's defaults); ` +
      `the production build, create.lua, 50 connections, server and wrk pinned`,
];
console.log(lines[0]);
for (let round = 0; round < rounds; round++) {
  for (const policy of round % 2 === 0 ? [DEFAULTS, MIGRATION_9] : [MIGRATION_9, DEFAULTS]) {
    const line = `round ${round + 1}: ${
      httpSeconds === undefined
        ? await measure(seeded, policy)
        : await measureHttp(seeded, policy, httpSeconds)
    }`;
    console.log(line);
    lines.push(line);
  }
}
const out = `fts-merge-${httpSeconds === undefined ? '' : 'http-'}${benchSeed ? 'bench-seed-' : ''}${commit}.txt`;
writeFileSync(join(ROOT, 'bench', 'results', out), `${lines.join('\n')}\n`);
