/**
 * A development measurement, in process, of the SQLite trigram index's merge
 * policy (migration 9): what a create costs, and what a search costs over the
 * segments the policy leaves. Not a goal of `npm run bench` (which measures
 * through HTTP); its figures are quoted with this script's name.
 *
 * It seeds `stored` messages of chat text (chat-text.ts) once, in large
 * transactions as the search bench does (the file stays in bench/results/tmp), then, for each policy and round,
 * on a copy of that file: sets FTS5's `automerge` and `crisismerge`, creates `creates`
 * messages through the store, 20 to a group commit (each batch submitted in
 * one turn, as concurrent requests are), and times them; then times searches
 * for a rare word, a common word and both through the store's list.
 *
 * Usage: node --import tsx bench/fts-merge.ts [stored=1000000] [creates=300000] [rounds=2]
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
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
const rounds = Number(process.argv[4] ?? 2);
/** FTS5's defaults, and migration 9's: [automerge, crisismerge]. */
const POLICIES = [
  [4, 16],
  [16, 64],
] as const;
const BATCH = 20;

const seeded = join(TMP, `fts-merge-${stored}.db`);
const corpus = chatCorpus(stored + creates);
const rows = [...corpus.rows];
const rare = wordNear(corpus.documentFrequency, 100, 5)[0];
const common = wordNear(corpus.documentFrequency, (stored + creates) / 10, 3)[0];
if (!existsSync(seeded)) {
  const store = new SqliteStore({ filename: seeded, synchronous: 'off' });
  await store.migrate();
  await store.close();
  const db = new Database(seeded);
  db.pragma('synchronous = OFF');
  const insert = sqliteMessageInserter(db);
  const fill = db.transaction((chunk: SeedRow[]) => chunk.forEach(insert));
  for (let i = 0; i < stored; i += 50_000) fill(rows.slice(i, Math.min(stored, i + 50_000)));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
const createTexts = rows.slice(stored);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure([automerge, crisismerge]: readonly [number, number]): Promise<string> {
  const file = join(TMP, 'fts-merge-work.db');
  copySqlite(seeded, file);
  const setter = new Database(file);
  setter.exec(
    `INSERT INTO message_search (message_search, rank) VALUES ('automerge', ${automerge})`,
  );
  setter.exec(
    `INSERT INTO message_search (message_search, rank) VALUES ('crisismerge', ${crisismerge})`,
  );
  setter.close();
  const store = new SqliteStore({ filename: file, synchronous: 'off' });
  await store.migrate();
  try {
    const started = performance.now();
    for (let i = 0; i < createTexts.length; i += BATCH) {
      await Promise.all(
        createTexts.slice(i, i + BATCH).map((row) =>
          store.messages.create({
            id: uuidv7(),
            room: 'general',
            author: row.author,
            content: row.content,
            createdAt: new Date().toISOString(),
          }),
        ),
      );
    }
    const perCreate = ((performance.now() - started) * 1000) / createTexts.length;
    const searches: string[] = [];
    for (const q of [rare, common, `${rare} ${common}`]) {
      const times: number[] = [];
      for (let i = 0; i < 60; i++) {
        const t = performance.now();
        await store.messages.list({ q: searchQuery(q, false), order: 'desc', limit: 50 });
        times.push(performance.now() - t);
      }
      searches.push(`q=${q}: ${median(times.slice(10)).toFixed(2)} ms`);
    }
    const check = new Database(file, { readonly: true });
    const segments = check
      .prepare('SELECT count(DISTINCT segid) FROM message_search_idx')
      .pluck()
      .get();
    check.close();
    return `automerge=${automerge} crisismerge=${crisismerge}: ${perCreate.toFixed(1)} µs per create, ${segments} segments; median search ${searches.join(', ')}`;
  } finally {
    await store.close();
    removeSqlite(file);
  }
}

console.log(`${stored} stored, ${creates} creates in group commits of ${BATCH}, synchronous=off`);
for (let round = 0; round < rounds; round++) {
  for (const policy of round % 2 === 0 ? POLICIES : [...POLICIES].reverse()) {
    console.log(`round ${round + 1}: ${await measure(policy)}`);
  }
}
