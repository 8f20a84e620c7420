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
 * Usage: node --import tsx bench/fts-merge.ts [stored=1000000] [creates=300000] [rounds=3]
 */
import { execSync } from 'node:child_process';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { searchQuery } from '../src/domain/search-text.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { chatCorpus, wordNear } from './chat-text.ts';
import { copySqlite, removeSqlite, sqliteMessageInserter, type SeedRow } from './seed-data.ts';

const ROOT = join(import.meta.dirname, '..');
const TMP = join(ROOT, 'bench', 'results', 'tmp');
const stored = Number(process.argv[2] ?? 1_000_000);
const creates = Number(process.argv[3] ?? 300_000);
const rounds = Number(process.argv[4] ?? 3);
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
  const file = join(TMP, `fts-merge-${stored}.db`);
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
  for (let i = 0; i < stored; i += 50_000) fill(rows.slice(i, Math.min(stored, i + 50_000)));
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

const seeded = await seededFile();
const commit = execSync('git rev-parse --short=10 HEAD', { cwd: ROOT }).toString().trim();
const lines = [
  `bench/fts-merge.ts at ${commit}: ${stored} stored (seeded under FTS5's defaults), ` +
    `${creates} creates in group commits of ${BATCH}, synchronous=off; ` +
    `rare word "${rare}", common word "${common}"`,
];
console.log(lines[0]);
for (let round = 0; round < rounds; round++) {
  for (const policy of round % 2 === 0 ? [DEFAULTS, MIGRATION_9] : [MIGRATION_9, DEFAULTS]) {
    const line = `round ${round + 1}: ${await measure(seeded, policy)}`;
    console.log(line);
    lines.push(line);
  }
}
writeFileSync(join(ROOT, 'bench', 'results', `fts-merge-${commit}.txt`), `${lines.join('\n')}\n`);
