/**
 * The `search` group of `npm run bench`: `q` on both stores at `large`
 * stored messages of realistic chat text (chat-text.ts, seeded), and what
 * the index costs.
 *
 * - Latency of a search, one connection (a search's own time, no queueing
 *   behind 49 others): a rare word (in about 100 messages) with
 *   order=desc&limit=50, a common word (in about 10%) with limit=50, and the
 *   two together. Goals: p99 ≤ 20, 50 and 20 ms.
 * - A durable POST with the index against the same POST of the build before
 *   search (--baseline), interleaved, each on an empty store of its own.
 *   Goal: ≥ 0.8× the baseline's req/s.
 * - Bytes per message on disk, and the index's share of them.
 *
 * The numbers go into the run's notes and scenarios, and whole into
 * bench/results/search-<commit>.json.
 */
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { buildBaseline, type BaselineBuild } from './baseline-build.ts';
import { pairedRatio } from './bench-goals.ts';
import type { ScenarioResult } from './bench-types.ts';
import { chatCorpus, wordNear } from './chat-text.ts';
import { databaseCpuSeconds } from './pg-backend-cpu.ts';
import {
  insertPostgresRows,
  removeSqlite,
  settleTables,
  sqliteMessageInserter,
  type SeedRow,
} from './seed-data.ts';
import { pairedRounds, wrkMember, type Member, type RoundContext } from './paired-rounds.ts';
import type { Cores, ServerProcess } from './server-process.ts';

export interface SearchBenchContext {
  readonly root: string;
  readonly tmp: string;
  readonly dirs: { readonly lua: string; readonly tmp: string };
  readonly cores: Cores;
  readonly large: number;
  readonly plan: {
    readonly seconds: number;
    readonly warmupSeconds: number;
    readonly rounds: number;
    readonly connections: number;
  };
  readonly baseline: string | undefined;
  startService(name: string, env: Record<string, string>, cwd?: string): Promise<ServerProcess>;
  stop(server: ServerProcess): Promise<void>;
  log(line: string): void;
}

export interface SearchBenchResult {
  readonly scenarios: ScenarioResult[];
  readonly notes: string[];
}

/** A search's own latency: one request at a time. */
const SEARCH_CONNECTIONS = 1;

/** The rounds of this group: its own plan, one connection by default. */
function roundContext(ctx: SearchBenchContext): RoundContext {
  return { cores: ctx.cores, dirs: ctx.dirs, plan: ctx.plan, log: ctx.log };
}

interface Seeded {
  readonly sqliteFile: string;
  readonly pgUrl: string | null;
  readonly rare: [string, number];
  readonly common: [string, number];
  readonly seedSeconds: { sqlite: number; postgres: number | null };
}

/** One pass of the generator into both stores: SQLite as the store writes it, PostgreSQL in bulk. */
export async function seed(
  ctx: Pick<SearchBenchContext, 'tmp' | 'large' | 'log'>,
  admin: pg.Client | null,
  schemaUrl: string | null,
) {
  const sqliteFile = join(ctx.tmp, 'search.db');
  removeSqlite(sqliteFile);
  const store = new SqliteStore({ filename: sqliteFile, synchronous: 'off' });
  await store.migrate();
  await store.close();
  const db = new Database(sqliteFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  // The row as a create writes it: search_text, search_rowid and its trigram index entry.
  const insert = sqliteMessageInserter(db);
  let pgClient: pg.Client | null = null;
  if (admin !== null && schemaUrl !== null) {
    const pgStore = new PostgresStore({
      url: schemaUrl,
      poolSize: 1,
      timeoutMs: 600_000,
      onBackgroundError: () => undefined,
    });
    await pgStore.migrate();
    await pgStore.close();
    const base = new URL(schemaUrl);
    const schema = base.searchParams.get('schema')!;
    base.searchParams.delete('schema');
    pgClient = new pg.Client({ connectionString: base.toString() });
    await pgClient.connect();
    await pgClient.query(`SET search_path = ${schema}`);
    // Built once after the load, as a CREATE INDEX on existing rows (faster than row by row).
    await pgClient.query('DROP INDEX messages_search_text');
  }
  const corpus = chatCorpus(ctx.large);
  let sqliteSeconds = 0;
  let pgSeconds = 0;
  let chunk: SeedRow[] = [];
  const flushSqlite = db.transaction((rows: SeedRow[]) => {
    for (const r of rows) insert(r);
  });
  const flush = async () => {
    if (chunk.length === 0) return;
    let t = performance.now();
    flushSqlite(chunk);
    sqliteSeconds += (performance.now() - t) / 1000;
    if (pgClient !== null) {
      t = performance.now();
      await insertPostgresRows(pgClient, chunk, true);
      pgSeconds += (performance.now() - t) / 1000;
    }
    chunk = [];
  };
  let n = 0;
  for (const row of corpus.rows) {
    chunk.push(row);
    if (chunk.length === 10_000) {
      await flush();
      n += 10_000;
      if (n % 100_000 === 0) ctx.log(`  [search] seeded ${n.toLocaleString('en')} messages`);
    }
  }
  await flush();
  let t = performance.now();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  sqliteSeconds += (performance.now() - t) / 1000;
  if (pgClient !== null) {
    t = performance.now();
    await pgClient.query("SET maintenance_work_mem = '512MB'");
    await pgClient.query(
      'CREATE INDEX messages_search_text ON messages USING gin (search_text public.gin_trgm_ops)',
    );
    await settleTables(pgClient, ['messages']);
    pgSeconds += (performance.now() - t) / 1000;
    await pgClient.end();
  }
  return {
    sqliteFile,
    pgUrl: schemaUrl,
    rare: wordNear(corpus.documentFrequency, 100, 5),
    common: wordNear(corpus.documentFrequency, ctx.large / 10, 3),
    seedSeconds: { sqlite: sqliteSeconds, postgres: pgClient === null ? null : pgSeconds },
  } satisfies Seeded;
}

/** How many messages each search really matches (substrings: more than the word's own count). */
function matchCounts(file: string, terms: readonly string[][]): number[] {
  const db = new Database(file, { readonly: true });
  try {
    return terms.map((t) => {
      const where = t.map(() => 'instr(search_text, ?) > 0').join(' AND ');
      return db
        .prepare(`SELECT count(*) FROM messages WHERE ${where}`)
        .pluck()
        .get(...t) as number;
    });
  } finally {
    db.close();
  }
}

/** Bytes on disk per message: all of it, and the search's own part. */
function sqliteBytes(file: string, count: number) {
  const db = new Database(file, { readonly: true });
  try {
    const pages = db
      .prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name')
      .all() as { name: string; bytes: number }[];
    const total = pages.reduce((s, p) => s + p.bytes, 0);
    const index = pages
      .filter((p) => p.name.startsWith('message_search') || p.name === 'messages_search_rowid')
      .reduce((s, p) => s + p.bytes, 0);
    const column = db
      .prepare('SELECT sum(length(CAST(search_text AS BLOB))) + count(*) * 9 FROM messages')
      .pluck()
      .get() as number;
    return {
      totalPerMessage: total / count,
      indexPerMessage: index / count,
      searchTextPerMessage: column / count,
    };
  } finally {
    db.close();
  }
}

async function postgresBytes(admin: pg.Client, schema: string, count: number) {
  const { rows } = await admin.query<{ total: string; gin: string; column: string }>(
    `SELECT pg_total_relation_size('${schema}.messages') AS total,
            pg_relation_size('${schema}.messages_search_text') AS gin,
            (SELECT sum(pg_column_size(search_text)) FROM ${schema}.messages) AS column`,
  );
  const row = rows[0]!;
  return {
    totalPerMessage: Number(row.total) / count,
    indexPerMessage: Number(row.gin) / count,
    searchTextPerMessage: Number(row.column) / count,
  };
}

function commitOf(root: string): string {
  try {
    return execSync('git rev-parse --short=10 HEAD', { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export async function searchGroup(ctx: SearchBenchContext): Promise<SearchBenchResult> {
  const notes: string[] = [];
  const scenarios: ScenarioResult[] = [];
  const baseUrl =
    process.env.BENCH_PG_URL ??
    process.env.TEST_PG_URL ??
    'postgres://postgres@127.0.0.1:5432/test';
  let admin: pg.Client | null = new pg.Client({
    connectionString: baseUrl,
    connectionTimeoutMillis: 3000,
  });
  const schemas: string[] = [];
  const schemaUrl = () => {
    const schema = `bench_search_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
    const url = new URL(baseUrl);
    url.searchParams.set('schema', schema);
    return url.toString();
  };
  try {
    await admin.connect();
  } catch (error) {
    notes.push(`search: PostgreSQL not reachable (${(error as Error).message}): SQLite only`);
    admin = null;
  }
  const started: ServerProcess[] = [];
  const start = async (name: string, env: Record<string, string>, cwd?: string) => {
    const server = await ctx.startService(name, env, cwd);
    started.push(server);
    return server;
  };
  let baseline: BaselineBuild | undefined;
  try {
    ctx.log(
      `search: seeding ${ctx.large.toLocaleString('en')} messages of chat text (both stores)`,
    );
    const seeded = await seed(ctx, admin, admin === null ? null : schemaUrl());
    const [rare, common] = [seeded.rare[0], seeded.common[0]];
    const queries = [
      { id: 'rare', terms: [rare], path: `?q=${rare}&order=desc&limit=50`, goal: 20 },
      { id: 'common', terms: [common], path: `?q=${common}&order=desc&limit=50`, goal: 50 },
      {
        id: 'rare+common',
        terms: [rare, common],
        path: `?q=${rare}%20${common}&order=desc&limit=50`,
        goal: 20,
      },
    ];
    const matches = matchCounts(
      seeded.sqliteFile,
      queries.map((q) => q.terms),
    );
    queries.forEach((q, i) =>
      notes.push(`search: q=${q.terms.join(' ')} matches ${matches[i]} of ${ctx.large} messages`),
    );
    notes.push(
      `search: seeding took ${seeded.seedSeconds.sqlite.toFixed(0)} s on SQLite (FTS5 written with each row)` +
        (seeded.seedSeconds.postgres === null
          ? ''
          : `, ${seeded.seedSeconds.postgres.toFixed(0)} s on PostgreSQL (GIN built after the load)`),
    );
    const bytes: Record<string, unknown> = { sqlite: sqliteBytes(seeded.sqliteFile, ctx.large) };
    if (admin !== null && seeded.pgUrl !== null) {
      const schema = new URL(seeded.pgUrl).searchParams.get('schema')!;
      bytes.postgres = await postgresBytes(admin, schema, ctx.large);
    }
    for (const [store, b] of Object.entries(bytes) as [string, ReturnType<typeof sqliteBytes>][]) {
      notes.push(
        `search: ${store} on disk ${b.totalPerMessage.toFixed(0)} B/message in all; the trigram index ` +
          `${b.indexPerMessage.toFixed(0)} B/message, the normalized text ${b.searchTextPerMessage.toFixed(0)} B/message`,
      );
    }

    // Latency of searches, one connection, both stores.
    const sqliteService = await start('search-sqlite', {
      DATABASE_URL: `sqlite:${seeded.sqliteFile}`,
    });
    const pgService =
      seeded.pgUrl === null
        ? undefined
        : await start('search-postgres', { DATABASE_URL: seeded.pgUrl });
    const dbCpu = (server: ServerProcess) =>
      admin === null ? undefined : () => databaseCpuSeconds(admin!, server.pid);
    const searchMembers: Member[] = [];
    for (const [store, server] of [
      ['sqlite', sqliteService],
      ['postgres', pgService],
    ] as const) {
      if (server === undefined) continue;
      for (const q of queries) {
        searchMembers.push(
          wrkMember(
            roundContext(ctx),
            server,
            {
              id: `search:${store}-${q.id}`,
              label: `GET /api/messages${q.path} (${q.id}), 1 connection`,
              store,
              stored: ctx.large,
              connections: SEARCH_CONNECTIONS,
              settings: {},
            },
            { path: `/api/messages${q.path}` },
            store === 'postgres' ? dbCpu(server) : undefined,
          ),
        );
      }
    }
    const searched = await pairedRounds(roundContext(ctx), 'search', searchMembers, null);
    scenarios.push(...searched);
    for (const s of searched) {
      const goal = queries.find((q) => s.id.endsWith(`-${q.id}`))!.goal;
      notes.push(
        `search goal ${s.id}: p99 ${s.summary.p99Ms.toFixed(2)} ms (worst round ${s.summary.worstP99Ms.toFixed(2)} ms), ` +
          `p50 ${s.summary.p50Ms.toFixed(2)} ms, ${Math.round(s.summary.requestsPerSecond)} req/s: ` +
          `${s.summary.p99Ms <= goal ? 'met' : 'NOT met'} (≤ ${goal} ms)`,
      );
    }
    for (const server of [sqliteService, pgService]) {
      if (server !== undefined) {
        await ctx.stop(server);
        started.splice(started.indexOf(server), 1);
      }
    }

    // The index's cost on a durable POST: this build against the baseline, empty stores.
    const createMembers: Member[] = [];
    const creators: { store: 'sqlite' | 'postgres'; build: string; server: ServerProcess }[] = [];
    const files: string[] = [];
    const emptySqlite = (name: string) => {
      const file = join(ctx.tmp, `${name}.db`);
      removeSqlite(file);
      files.push(file);
      return `sqlite:${file}`;
    };
    creators.push({
      store: 'sqlite',
      build: 'current',
      server: await start('search-create-sqlite', { DATABASE_URL: emptySqlite('search-create') }),
    });
    if (admin !== null) {
      creators.push({
        store: 'postgres',
        build: 'current',
        server: await start('search-create-pg', { DATABASE_URL: schemaUrl() }),
      });
    }
    if (ctx.baseline === undefined) {
      notes.push('search: no --baseline given, so no index cost on POST');
    } else {
      ctx.log(`search: building the baseline ${ctx.baseline}`);
      baseline = buildBaseline(ctx.root, ctx.tmp, ctx.baseline);
      creators.push({
        store: 'sqlite',
        build: 'baseline',
        server: await start(
          'search-create-sqlite-baseline',
          { DATABASE_URL: emptySqlite('search-create-baseline') },
          baseline.cwd,
        ),
      });
      if (admin !== null) {
        creators.push({
          store: 'postgres',
          build: 'baseline',
          server: await start(
            'search-create-pg-baseline',
            { DATABASE_URL: schemaUrl() },
            baseline.cwd,
          ),
        });
      }
    }
    for (const c of creators) {
      createMembers.push(
        wrkMember(
          roundContext(ctx),
          c.server,
          {
            id: `search-create:${c.store}-${c.build}`,
            label: `POST /api/messages (durable), ${c.build === 'current' ? 'with the search index' : `baseline ${baseline?.commit}`}`,
            store: c.store,
            stored: 0,
            connections: ctx.plan.connections,
            settings: {},
          },
          { path: '/api/messages', script: 'create.lua' },
          c.store === 'postgres' ? dbCpu(c.server) : undefined,
        ),
      );
    }
    const created = await pairedRounds(roundContext(ctx), 'search-create', createMembers, null);
    scenarios.push(...created);
    for (const store of ['sqlite', 'postgres']) {
      const now = created.find((s) => s.id === `search-create:${store}-current`);
      const before = created.find((s) => s.id === `search-create:${store}-baseline`);
      if (now === undefined || before === undefined) continue;
      const ratio = pairedRatio(now, before);
      notes.push(
        `search goal ${store} durable POST with the index: ${Math.round(now.summary.requestsPerSecond)} req/s ` +
          `against ${Math.round(before.summary.requestsPerSecond)} req/s before (${baseline?.commit}): ` +
          `${ratio.toFixed(2)}× (${ratio >= 0.8 ? 'met' : 'NOT met'}, ≥ 0.8×)`,
      );
    }
    for (const c of creators) {
      await ctx.stop(c.server);
      started.splice(started.indexOf(c.server), 1);
    }
    for (const file of files) removeSqlite(file);
    const result = {
      commit: commitOf(ctx.root),
      stored: ctx.large,
      words: { rare: seeded.rare, common: seeded.common },
      matches: Object.fromEntries(queries.map((q, i) => [q.terms.join(' '), matches[i]])),
      bytes,
      seedSeconds: seeded.seedSeconds,
      notes,
      scenarios,
    };
    writeFileSync(
      join(ctx.root, 'bench', 'results', `search-${result.commit}.json`),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    removeSqlite(seeded.sqliteFile);
    return { scenarios, notes };
  } finally {
    for (const server of started) await ctx.stop(server).catch(() => undefined);
    baseline?.remove();
    if (admin !== null) {
      for (const schema of schemas) {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      }
      await admin.end().catch(() => undefined);
    }
  }
}
