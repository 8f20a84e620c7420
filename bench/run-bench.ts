/**
 * `npm run bench`: builds the production build, starts the service (SQLite,
 * and PostgreSQL when reachable) as separate processes pinned to one core,
 * drives them with wrk pinned to the other core, and measures the floor (a
 * plain node:http constant-JSON server on the same core) in interleaved
 * rounds, so every figure is also a ratio taken at the same moment. Writes
 * bench/results/<time>-<commit>.{json,md,svg}.
 *
 * Flags: --quick (or BENCH_QUICK=1): short rounds, small stores, for development.
 *        --only=get,size,history,list,create,mix,events,postgres,pg-create,start,user-rooms,streams,baseline,
 *          search,conversations,sustained:
 *          only these groups.
 *        --no-build: use the existing dist/.
 *        --baseline=<commit>: also build that commit and measure its PostgreSQL creates
 *          (CPU per create, service and database) interleaved with this one's (pg-create),
 *          its GET by id, history page and durable POST on both stores interleaved with this one's
 *          (baseline), and its durable creates against this one's (search: the index's cost).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import type {
  BenchResult,
  ListRun,
  ScenarioResult,
  StartResult,
  StreamsRun,
} from './bench-types.ts';
import { buildBaseline, type BaselineBuild } from './baseline-build.ts';
import { databaseCpuSeconds } from './pg-backend-cpu.ts';
import { startAndMeasure, treeRss } from './start-cost.ts';
import { computeGoals } from './bench-goals.ts';
import { machineInfo } from './machine-info.ts';
import { writeReport } from './report-writer.ts';
import {
  copySqlite,
  fillPostgres,
  fillSqlite,
  migratePostgres,
  removeSqlite,
  schemaClient,
  seedPostgres,
  settleTables,
  seedSqlite,
} from './seed-data.ts';
import {
  USER_ROOMS_SUBJECT,
  streamsLayout,
  userRoomsLayout,
  writeRoomsPostgres,
  writeRoomsSqlite,
} from './seed-rooms.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import {
  pairedRounds as roundsOf,
  wrkMember as measureWith,
  type Member,
  type RoundContext,
} from './paired-rounds.ts';
import { searchGroup } from './search-bench.ts';
import { conversationsGroup } from './conversations.ts';
import { sustainedGroup } from './sustained-create.ts';
import { postgresRoomIds, sqliteRoomIds } from './room-ids.ts';
import {
  detectCores,
  freePort,
  pinned,
  sampleRss,
  startServer,
  type Cores,
  type ServerProcess,
  SERVICE_SETTINGS,
} from './server-process.ts';
import { ensureWrk, runWrk } from './wrk-runner.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results');
const TMP = join(RESULTS, 'tmp');
const DIRS = { lua: join(ROOT, 'bench', 'lua'), tmp: TMP };
const MiB = 2 ** 20;
const GROUPS = [
  'get',
  'size',
  'history',
  'list',
  'create',
  'mix',
  'events',
  'postgres',
  'pg-create',
  'start',
  'user-rooms',
  'streams',
  'baseline',
  'search',
  'conversations',
  'sustained',
] as const;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    baseline: { type: 'string' },
  },
});
const quick = flags.quick || process.env.BENCH_QUICK === '1';
const only = new Set(flags.only?.split(',') ?? GROUPS);
const plan = quick
  ? { seconds: 2, warmupSeconds: 1, rounds: 2, connections: 50, small: 10_000, mid: 20_000 }
  : { seconds: 5, warmupSeconds: 2, rounds: 4, connections: 50, small: 10_000, mid: 100_000 };
const large = quick ? 100_000 : 1_000_000;
const listRuns = quick ? 1 : 3;
const AROUND_LABEL = 'page around a message (order=desc, limit=50, around=id)';
const ROOM_HISTORY_LABEL =
  "a room's history page (room=<the id's room>, order=desc, limit=50, before=id)";

/** `user-rooms` drives the subject's room list with fewer connections than the other groups. */
const USER_ROOMS_CONNECTIONS = 10;
/** `streams`: measured writes per store (after 20 warm-up writes). */
const streamWrites = quick ? 60 : 300;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function runJsonChild(command: string[], env: Record<string, string> = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out
        .trim()
        .split('\n')
        .reverse()
        .find((l) => l.trim().startsWith('{'));
      if (code !== 0 || line === undefined) {
        reject(new Error(`${command.join(' ')} failed (${code}):\n${err}${out.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(line));
    });
  });
}

/** The run's round context: this run's cores, folders, plan and log. */
let rounds: RoundContext | undefined;
function roundContext(cores: Cores): RoundContext {
  rounds ??= { cores, dirs: DIRS, plan, log };
  return rounds;
}

function wrkMember(
  cores: Cores,
  server: ServerProcess,
  meta: Omit<Member, 'measure'>,
  run: Parameters<typeof measureWith>[3],
  databaseCpu?: () => Promise<number>,
): Member {
  return measureWith(roundContext(cores), server, meta, run, databaseCpu);
}

function pairedRounds(group: string, members: readonly Member[], floorId: string | null) {
  return roundsOf(rounds!, group, members, floorId);
}

async function main(): Promise<void> {
  mkdirSync(TMP, { recursive: true });
  const startedAt = new Date();
  // Other work on the machine shows here; the ratios of interleaved rounds are what to compare.
  const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
  const machine = machineInfo(ROOT);
  const cores = detectCores(machine.cores);
  if (cores.pinned) {
    // The harness itself (and the load generator) stays off the server's core.
    spawnSync('taskset', ['-a', '-p', '-c', cores.client, String(process.pid)], {
      stdio: 'ignore',
    });
  } else {
    log('! taskset or a second core is missing: processes are not pinned');
  }
  const wrk = ensureWrk();
  if (!flags['no-build']) {
    log('building the production build (npm run build)');
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const notes: string[] = [];
  const scenarios: ScenarioResult[] = [];
  const serverCommand = pinned(cores, cores.server, [process.execPath, 'dist/server.js']);
  const started: ServerProcess[] = [];

  /** The service's production build; `cwd` runs another checkout's build (a baseline). */
  const startService = async (name: string, env: Record<string, string>, cwd = ROOT) => {
    // PostgreSQL's migration lock is one per database, not per schema: a start waits while other
    // schemas of the same database migrate (other test runs on a shared server), and exits once
    // STORE_TIMEOUT_MS (5 s by default; also each query's limit) has passed. A longer limit
    // changes nothing that is measured: no measured request waits anywhere near 5 s.
    const patient: Record<string, string> = env.DATABASE_URL?.startsWith('postgres')
      ? { STORE_TIMEOUT_MS: '120000' }
      : {};
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        const server = await startServer({
          name,
          command: serverCommand,
          env: { ...SERVICE_SETTINGS, ...patient, ...env, PORT: String(port) },
          port,
          readyPath: '/readyz',
          cwd,
        });
        started.push(server);
        return server;
      } catch (error) {
        const first = (error as Error).message.split('\n')[0]!;
        if (attempt === 3 || !first.includes('exited at start')) throw error;
        notes.push(`${name}: start ${attempt} failed (${first.trim()}), started again`);
        log(`! ${name}: start ${attempt} failed (${first.trim()}); again in 5 s`);
        await new Promise((resolve) => setTimeout(resolve, 5000));
      }
    }
  };
  const stop = async (server: ServerProcess) => {
    await server.stop();
    started.splice(started.indexOf(server), 1);
  };

  const floorPort = await freePort();
  const floorServer = await startServer({
    name: 'floor',
    command: pinned(cores, cores.server, [process.execPath, 'bench/floor-server.mjs']),
    env: { PORT: String(floorPort) },
    port: floorPort,
    readyPath: '/',
    cwd: ROOT,
  });
  started.push(floorServer);
  const floor = (group: string, connections?: number) =>
    wrkMember(
      cores,
      floorServer,
      {
        id: `${group}:floor`,
        label: 'floor: plain node:http, constant JSON',
        store: 'none',
        stored: null,
        settings: {},
        ...(connections === undefined ? {} : { connections }),
      },
      { path: '/' },
    );

  const sqliteUrl = (file: string) => `sqlite:${file}`;
  const dbFile = (name: string) => join(TMP, `${name}.db`);
  const idsFile = (name: string) => join(TMP, `ids-${name}.txt`);
  const needSizes = ['size', 'history', 'list', 'create', 'conversations', 'sustained'].some((g) =>
    only.has(g),
  );
  const needMid = ['get', 'mix', 'start'].some((g) => only.has(g));
  const needPostgres = [
    'history',
    'list',
    'postgres',
    'pg-create',
    'conversations',
    'sustained',
  ].some((g) => only.has(g));
  // These seed schemas of their own: PostgreSQL without the shared 1M-message schema.
  const needPostgresOnly = ['user-rooms', 'streams', 'baseline'].some((g) => only.has(g));
  let baselineBuild: BaselineBuild | undefined;
  const getBaseline = () => (baselineBuild ??= buildBaseline(ROOT, TMP, flags.baseline!));

  let sqliteVersion = '';
  {
    const db = new Database(':memory:');
    sqliteVersion = db.prepare('SELECT sqlite_version() AS v').pluck().get() as string;
    db.close();
  }

  let pgBench: PostgresBench | null = null;
  try {
    log(`seeding SQLite stores (${plan.small}, ${plan.mid}, ${large} messages)`);
    if (needSizes) {
      await seedSqlite(dbFile('small'), plan.small, idsFile('small'));
      await seedSqlite(dbFile('large'), large, idsFile('large'));
    }
    if (needMid) await seedSqlite(dbFile('mid'), plan.mid, idsFile('mid'));

    const sqlite = (stored: number, sync = 'full') => ({
      store: 'sqlite' as const,
      stored,
      settings: { SQLITE_SYNCHRONOUS: sync },
    });

    if (only.has('get')) {
      log(`GET by id, ${plan.mid} stored, against the floor and /healthz`);
      const service = await startService('get', { DATABASE_URL: sqliteUrl(dbFile('mid')) });
      const members = [
        floor('get'),
        wrkMember(
          cores,
          service,
          {
            id: 'get:healthz',
            label: "the service's /healthz (constant JSON, whole stack)",
            ...sqlite(plan.mid),
          },
          { path: '/healthz' },
        ),
        wrkMember(
          cores,
          service,
          { id: 'get:sqlite', label: 'GET /api/messages/{id}', ...sqlite(plan.mid) },
          { path: '/', script: 'get-by-id.lua', args: [idsFile('mid')] },
        ),
      ];
      scenarios.push(...(await pairedRounds('get', members, 'get:floor')));
      await stop(service);
    }

    if (only.has('size')) {
      log(`cost against history: get and history page at ${plan.small} and ${large} stored`);
      const small = await startService('small', { DATABASE_URL: sqliteUrl(dbFile('small')) });
      const big = await startService('large', { DATABASE_URL: sqliteUrl(dbFile('large')) });
      const members = [floor('size')];
      for (const [server, size, name] of [
        [small, plan.small, 'small'],
        [big, large, 'large'],
      ] as const) {
        members.push(
          wrkMember(
            cores,
            server,
            { id: `size:get-${size}`, label: 'GET /api/messages/{id}', ...sqlite(size) },
            { path: '/', script: 'get-by-id.lua', args: [idsFile(name)] },
          ),
          wrkMember(
            cores,
            server,
            {
              id: `size:history-${size}`,
              label: 'history page (order=desc, limit=50, before=id)',
              ...sqlite(size),
            },
            { path: '/', script: 'history.lua', args: [idsFile(name)] },
          ),
        );
      }
      scenarios.push(...(await pairedRounds('size', members, 'size:floor')));
      await stop(small);
      await stop(big);
    }

    if (needPostgres || needPostgresOnly) {
      pgBench = await openPostgresBench(idsFile('pg-large'), needPostgres);
      if (pgBench.note !== undefined) notes.push(pgBench.note);
    }
    const pgService =
      pgBench?.url === undefined || !['history', 'list', 'postgres'].some((g) => only.has(g))
        ? undefined
        : await startService('postgres', { DATABASE_URL: pgBench.url });
    const postgresMeta = (stored: number) => ({
      store: 'postgres' as const,
      stored,
      settings: { PG_POOL_SIZE: '10 (default)' },
    });

    if (only.has('history')) {
      log(
        `GET by id and history page at ${large} stored, SQLite and PostgreSQL, one set of rounds`,
      );
      const sqliteLarge = await startService('history', {
        DATABASE_URL: sqliteUrl(dbFile('large')),
      });
      const members = [
        floor('history'),
        wrkMember(
          cores,
          sqliteLarge,
          { id: 'history:sqlite-get', label: 'GET /api/messages/{id}', ...sqlite(large) },
          { path: '/', script: 'get-by-id.lua', args: [idsFile('large')] },
        ),
        wrkMember(
          cores,
          sqliteLarge,
          {
            id: 'history:sqlite-history',
            label: 'history page (order=desc, limit=50, before=id)',
            ...sqlite(large),
          },
          { path: '/', script: 'history.lua', args: [idsFile('large')] },
        ),
        wrkMember(
          cores,
          sqliteLarge,
          { id: 'history:sqlite-around', label: AROUND_LABEL, ...sqlite(large) },
          { path: '/', script: 'around.lua', args: [idsFile('large')] },
        ),
        wrkMember(
          cores,
          sqliteLarge,
          { id: 'history:sqlite-room-history', label: ROOM_HISTORY_LABEL, ...sqlite(large) },
          {
            path: '/',
            script: 'room-history.lua',
            args: [sqliteRoomIds(dbFile('large'), idsFile('large'), idsFile('large-rooms'))],
          },
        ),
      ];
      if (pgService !== undefined) {
        members.push(
          wrkMember(
            cores,
            pgService,
            { id: 'history:postgres-get', label: 'GET /api/messages/{id}', ...postgresMeta(large) },
            { path: '/', script: 'get-by-id.lua', args: [idsFile('pg-large')] },
            pgBench!.databaseCpu(pgService),
          ),
          wrkMember(
            cores,
            pgService,
            {
              id: 'history:postgres-history',
              label: 'history page (order=desc, limit=50, before=id)',
              ...postgresMeta(large),
            },
            { path: '/', script: 'history.lua', args: [idsFile('pg-large')] },
            pgBench!.databaseCpu(pgService),
          ),
          wrkMember(
            cores,
            pgService,
            { id: 'history:postgres-around', label: AROUND_LABEL, ...postgresMeta(large) },
            { path: '/', script: 'around.lua', args: [idsFile('pg-large')] },
            pgBench!.databaseCpu(pgService),
          ),
          wrkMember(
            cores,
            pgService,
            {
              id: 'history:postgres-room-history',
              label: ROOM_HISTORY_LABEL,
              ...postgresMeta(large),
            },
            {
              path: '/',
              script: 'room-history.lua',
              args: [
                await postgresRoomIds(
                  pgBench!.url!,
                  idsFile('pg-large'),
                  idsFile('pg-large-rooms'),
                ),
              ],
            },
            pgBench!.databaseCpu(pgService),
          ),
        );
      }
      scenarios.push(...(await pairedRounds('history', members, 'history:floor')));
      await stop(sqliteLarge);
    }

    let list: BenchResult['list'] = null;
    let postgresList: BenchResult['postgresList'] = null;
    if (only.has('list')) {
      log(`list everything: ${large} messages streamed`);
      const server = await startService('list', { DATABASE_URL: sqliteUrl(dbFile('large')) });
      list = { stored: large, runs: await listEverything(cores, server, large, 'sqlite') };
      await stop(server);
      if (pgService !== undefined) {
        postgresList = {
          stored: large,
          runs: await listEverything(cores, pgService, large, 'postgres'),
        };
      }
    }

    if (only.has('create')) {
      log('create: durable (synchronous=full) and fsync off, at two sizes');
      copySqlite(dbFile('small'), dbFile('create-full-small'));
      copySqlite(dbFile('small'), dbFile('create-off-small'));
      copySqlite(dbFile('large'), dbFile('create-full-large'));
      const fullSmall = await startService('create-full', {
        DATABASE_URL: sqliteUrl(dbFile('create-full-small')),
        SQLITE_SYNCHRONOUS: 'full',
      });
      const offSmall = await startService('create-off', {
        DATABASE_URL: sqliteUrl(dbFile('create-off-small')),
        SQLITE_SYNCHRONOUS: 'off',
      });
      const fullLarge = await startService('create-full-large', {
        DATABASE_URL: sqliteUrl(dbFile('create-full-large')),
        SQLITE_SYNCHRONOUS: 'full',
      });
      const members = [
        floor('create'),
        wrkMember(
          cores,
          fullSmall,
          {
            id: `create:durable-${plan.small}`,
            label: 'POST /api/messages, durable (fsync on)',
            ...sqlite(plan.small),
          },
          { path: '/api/messages', script: 'create.lua' },
        ),
        wrkMember(
          cores,
          offSmall,
          {
            id: `create:fsync-off-${plan.small}`,
            label: 'POST /api/messages, fsync off',
            ...sqlite(plan.small, 'off'),
          },
          { path: '/api/messages', script: 'create.lua' },
        ),
        wrkMember(
          cores,
          fullLarge,
          {
            id: `create:durable-${large}`,
            label: 'POST /api/messages, durable (fsync on)',
            ...sqlite(large),
          },
          { path: '/api/messages', script: 'create.lua' },
        ),
      ];
      scenarios.push(...(await pairedRounds('create', members, 'create:floor')));
      for (const s of [fullSmall, offSmall, fullLarge]) await stop(s);
      for (const name of ['create-full-small', 'create-off-small', 'create-full-large']) {
        removeSqlite(dbFile(name));
      }
    }

    if (only.has('mix')) {
      log(`90/10 read/write mix, ${plan.mid} stored, durable`);
      copySqlite(dbFile('mid'), dbFile('mix'));
      const service = await startService('mix', { DATABASE_URL: sqliteUrl(dbFile('mix')) });
      const members = [
        floor('mix'),
        wrkMember(
          cores,
          service,
          { id: 'mix:sqlite', label: '90% GET by id, 10% POST (durable)', ...sqlite(plan.mid) },
          { path: '/', script: 'mix.lua', args: [idsFile('mid')] },
        ),
      ];
      scenarios.push(...(await pairedRounds('mix', members, 'mix:floor')));
      await stop(service);
      removeSqlite(dbFile('mix'));
    }

    let events: unknown = null;
    if (only.has('events')) {
      if (existsSync(join(ROOT, 'bench', 'event-latency.ts'))) {
        log('write-to-subscriber latency (bench/event-latency.ts)');
        try {
          events = await runJsonChild(
            [process.execPath, '--import', 'tsx', 'bench/event-latency.ts'],
            // Built above already; quick mode makes it write fewer messages.
            { BENCH_SKIP_BUILD: '1', ...(quick ? { BENCH_QUICK: '1' } : {}) },
          );
          log(`  [events] ${JSON.stringify(events)}`);
        } catch (error) {
          notes.push(`event latency failed: ${(error as Error).message.split('\n')[0]}`);
          log(`  [events] failed: ${(error as Error).message}`);
        }
      } else {
        notes.push('bench/event-latency.ts does not exist: no write-to-subscriber latency');
      }
    }

    if (only.has('postgres') && pgService !== undefined) {
      log(
        `PostgreSQL: GET by id and durable POST at ${large} stored, against in-process node-postgres`,
      );
      scenarios.push(
        ...(await postgresGroup(cores, pgService, pgBench!, floor, idsFile('pg-large'))),
      );
    }
    if (pgService !== undefined) await stop(pgService);

    let baseline: string | null = null;
    if (only.has('pg-create') && pgBench?.url !== undefined) {
      baseline = await pgCreateGroup(
        cores,
        pgBench,
        startService,
        stop,
        floor,
        scenarios,
        notes,
        getBaseline,
      );
    }

    /** A group that fails leaves a note, and the groups before it are still reported. */
    const guarded = async (group: string, work: () => Promise<void>) => {
      try {
        await work();
      } catch (error) {
        const first = (error as Error).message.split('\n')[0]!;
        notes.push(`${group} failed: ${first}`);
        log(`! ${group} failed: ${(error as Error).stack ?? first}`);
      }
    };

    if (only.has('user-rooms')) {
      await guarded('user-rooms', async () => {
        scenarios.push(
          ...(await userRoomsGroup(cores, pgBench, startService, stop, floor, notes, {
            dbFile,
            idsFile,
          })),
        );
      });
    }

    let streams: BenchResult['streams'] = null;
    if (only.has('streams')) {
      await guarded('streams', async () => {
        streams = await streamsGroup(cores, pgBench, startService, stop, dbFile, notes);
      });
    }

    if (only.has('baseline')) {
      if (flags.baseline === undefined) {
        notes.push('baseline: no --baseline given, so no HEAD/baseline ratio');
      } else {
        await guarded('baseline', async () => {
          const build = getBaseline();
          baseline = build.commit;
          scenarios.push(
            ...(await baselineGroup(cores, pgBench, build, startService, stop, floor, {
              dbFile,
              idsFile,
            })),
          );
        });
      }
    }

    if (only.has('search')) {
      const search = await searchGroup({
        ...{ root: ROOT, tmp: TMP, dirs: DIRS, cores, large, plan, baseline: flags.baseline },
        ...{ startService, stop, log },
      });
      scenarios.push(...search.scenarios);
      notes.push(...search.notes);
    }

    if (only.has('conversations')) {
      await guarded('conversations', async () => {
        const pg = pgBench?.url === undefined ? null : { ...pgBench, url: pgBench.url };
        const got = await conversationsGroup({
          ...{ round: roundContext(cores), tmp: TMP, large, floor, startService, stop },
          sqlite: { file: dbFile('large'), ids: idsFile('large') },
          postgres: pg === null ? null : { ...pg, ids: idsFile('pg-large') },
        });
        scenarios.push(...got.scenarios);
        notes.push(...got.notes);
      });
    }

    if (only.has('sustained')) {
      // Last of the groups on the shared PostgreSQL schema: its creates stay there.
      await guarded('sustained', async () => {
        const pg = pgBench?.url === undefined ? null : { ...pgBench, url: pgBench.url };
        const got = await sustainedGroup({
          ...{ round: roundContext(cores), quick, large, startService, stop },
          sqlite: { file: dbFile('large'), copy: dbFile('sustained') },
          postgres: pg === null ? null : { url: pg.url, databaseCpu: (s) => pg.databaseCpu(s) },
        });
        scenarios.push(...got.scenarios);
        notes.push(...got.notes);
      });
    }

    let start: StartResult[] | null = null;
    if (only.has('start')) start = await startGroup(cores, dbFile('mid'), idsFile('mid'));

    const result: BenchResult = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      mode: quick ? 'quick' : 'full',
      machine: {
        ...machine,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
        pinned: cores.pinned,
        serverCore: cores.server,
        clientCore: cores.client,
        wrk,
        sqlite: sqliteVersion,
        postgres: pgBench?.version ?? null,
      },
      plan: { ...plan, large, listRuns },
      settings: {
        ...SERVICE_SETTINGS,
        'STORE_TIMEOUT_MS (PostgreSQL)': '120000',
        'wrk threads': '1',
        build: 'npm run build (dist/)',
      },
      scenarios,
      list,
      postgresList,
      start,
      baseline,
      events,
      streams,
      goals: [],
      notes,
    };
    const withGoals: BenchResult = {
      ...result,
      goals: computeGoals(result, { small: plan.small, mid: plan.mid, large }),
    };
    const files = writeReport(withGoals, RESULTS);
    log(`\nwrote ${files.join(', ')}`);
    process.stdout.write(
      readFileSync(
        files.find((f) => f.endsWith('.md'))!,
        'utf8',
      ),
    );
  } finally {
    for (const server of [...started].reverse()) await server.stop();
    await pgBench?.close();
    baselineBuild?.remove();
  }
}

/** Streams every message `listRuns` times through bench/list-client.mjs, sampling the server's RSS. */
async function listEverything(
  cores: Cores,
  server: ServerProcess,
  large: number,
  store: string,
): Promise<ListRun[]> {
  const runs: ListRun[] = [];
  for (let i = 0; i < listRuns; i++) {
    const before = server.rss();
    const rss = sampleRss(server.pid, 20);
    const got = (await runJsonChild(
      pinned(cores, cores.client, [
        process.execPath,
        'bench/list-client.mjs',
        `${server.baseUrl}/api/messages`,
      ]),
    )) as { messages: number; bytes: number; seconds: number; complete: boolean };
    const { peak } = rss.stop();
    const run: ListRun = {
      messages: got.messages,
      bytes: got.bytes,
      seconds: got.seconds,
      messagesPerSecond: got.messages / got.seconds,
      complete: got.complete && got.messages === large,
      rssBeforeMiB: before / MiB,
      rssPeakMiB: peak / MiB,
      rssGrowthMiB: (peak - before) / MiB,
    };
    runs.push(run);
    log(
      `  [list ${store}] run ${i + 1}/${listRuns}: ${run.messages} messages in ${run.seconds.toFixed(2)} s = ` +
        `${Math.round(run.messagesPerSecond).toLocaleString('en')}/s, RSS ${run.rssBeforeMiB.toFixed(1)} -> ` +
        `${run.rssPeakMiB.toFixed(1)} MiB (+${run.rssGrowthMiB.toFixed(1)}), complete ${run.complete}`,
    );
  }
  return runs;
}

interface PostgresBench {
  readonly version: string | null;
  readonly note?: string;
  /** The seeded schema's DATABASE_URL (undefined when PostgreSQL is not reachable). */
  readonly url?: string;
  readonly baseUrl: string;
  /** A fresh, empty schema's URL (dropped at close). */
  emptySchema(): string;
  /** CPU seconds so far of the backends serving `server`. */
  databaseCpu(server: ServerProcess): () => Promise<number>;
  close(): Promise<void>;
}

/** Connects, and (when `seed`) seeds `large` messages into a schema of its own (dropped at close). */
async function openPostgresBench(idsPath: string, seed: boolean): Promise<PostgresBench> {
  const baseUrl =
    process.env.BENCH_PG_URL ??
    process.env.TEST_PG_URL ??
    'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 3000 });
  const schemas: string[] = [];
  const schemaUrl = () => {
    const schema = `bench_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
    const url = new URL(baseUrl);
    url.searchParams.set('schema', schema);
    return url.toString();
  };
  const base = {
    baseUrl,
    emptySchema: schemaUrl,
    databaseCpu: (server: ServerProcess) => () => databaseCpuSeconds(admin, server.pid),
    close: async () => {
      for (const schema of schemas) {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      }
      await admin.end().catch(() => undefined);
    },
  };
  let version: string;
  try {
    await admin.connect();
    version = ((await admin.query('SHOW server_version')).rows[0] as { server_version: string })
      .server_version;
  } catch (error) {
    await admin.end().catch(() => undefined);
    const note = `PostgreSQL not reachable at ${baseUrl} (${(error as Error).message}): skipped`;
    log(`! ${note}`);
    return { ...base, version: null, note };
  }
  if (!seed) return { ...base, version };
  const url = schemaUrl();
  log(`PostgreSQL ${version}: seeding ${large} messages`);
  await seedPostgres(url, large, idsPath);
  return { ...base, version, url };
}

/** GET by id and durable POST on PostgreSQL, against node-postgres in-process (its floor). */
async function postgresGroup(
  cores: Cores,
  server: ServerProcess,
  bench: PostgresBench,
  floor: (group: string) => Member,
  idsFile: string,
): Promise<ScenarioResult[]> {
  const url = bench.url!;
  const pgFloor = (mode: 'get' | 'create'): Member => ({
    id: `postgres:pg-floor-${mode}`,
    label: `floor: pg in-process ×32, ${mode === 'get' ? 'SELECT by id' : 'create_messages() of one'}`,
    store: 'postgres',
    stored: large,
    settings: { concurrency: '32' },
    measure: async (seconds) => {
      const got = (await runJsonChild(
        pinned(cores, cores.server, [
          process.execPath,
          '--import',
          'tsx',
          'bench/pg-floor.ts',
          mode,
          url,
          idsFile,
          String(seconds),
        ]),
      )) as { opsPerSecond: number; errors: number; latencyUs: { p50: number; p99: number } };
      return {
        requestsPerSecond: got.opsPerSecond,
        p50Ms: got.latencyUs.p50 / 1000,
        p99Ms: got.latencyUs.p99 / 1000,
        errors: got.errors,
        serverRssMiB: null,
        serverCpuUsPerRequest: null,
      };
    },
  });
  const meta = {
    store: 'postgres' as const,
    stored: large,
    settings: { PG_POOL_SIZE: '10 (default)' },
  };
  const members = [
    floor('postgres'),
    pgFloor('get'),
    wrkMember(
      cores,
      server,
      { id: 'postgres:get', label: 'GET /api/messages/{id}', ...meta },
      { path: '/', script: 'get-by-id.lua', args: [idsFile] },
      bench.databaseCpu(server),
    ),
    pgFloor('create'),
    wrkMember(
      cores,
      server,
      { id: 'postgres:create', label: 'POST /api/messages (durable)', ...meta },
      { path: '/api/messages', script: 'create.lua' },
      bench.databaseCpu(server),
    ),
  ];
  return pairedRounds('postgres', members, 'postgres:floor');
}

type StartService = (
  name: string,
  env: Record<string, string>,
  cwd?: string,
) => Promise<ServerProcess>;

/**
 * Durable creates on PostgreSQL, this build against an earlier commit's
 * (--baseline), interleaved: req/s and the CPU per create of the service and
 * of its database backends. Each server migrates an empty schema of its own.
 */
async function pgCreateGroup(
  cores: Cores,
  bench: PostgresBench,
  startService: StartService,
  stop: (server: ServerProcess) => Promise<void>,
  floor: (group: string) => Member,
  scenarios: ScenarioResult[],
  notes: string[],
  getBaseline: () => BaselineBuild,
): Promise<string | null> {
  const meta = (label: string) => ({
    label,
    store: 'postgres' as const,
    stored: 0,
    settings: { PG_POOL_SIZE: '10 (default)' },
  });
  const current = await startService('pg-create', { DATABASE_URL: bench.emptySchema() });
  const members = [
    floor('pg-create'),
    wrkMember(
      cores,
      current,
      { id: 'pg-create:current', ...meta('POST /api/messages (durable), this commit') },
      { path: '/api/messages', script: 'create.lua' },
      bench.databaseCpu(current),
    ),
  ];
  let baseline: BaselineBuild | undefined;
  let before: ServerProcess | undefined;
  if (flags.baseline === undefined) {
    notes.push('pg-create: no --baseline given, so no "before" figure');
  } else {
    log(`building the baseline ${flags.baseline}`);
    baseline = getBaseline();
    before = await startService(
      'pg-create-baseline',
      { DATABASE_URL: bench.emptySchema() },
      baseline.cwd,
    );
    members.push(
      wrkMember(
        cores,
        before,
        {
          id: 'pg-create:baseline',
          ...meta(`POST /api/messages (durable), baseline ${baseline.commit}`),
        },
        { path: '/api/messages', script: 'create.lua' },
        bench.databaseCpu(before),
      ),
    );
  }
  log('PostgreSQL durable creates: CPU per create, service and database');
  try {
    scenarios.push(...(await pairedRounds('pg-create', members, 'pg-create:floor')));
  } finally {
    await stop(current);
    if (before !== undefined) await stop(before);
  }
  return baseline?.commit ?? null;
}

interface SeedPaths {
  dbFile(name: string): string;
  idsFile(name: string): string;
}

/** PostgreSQL, when it answered (schemas of their own; the shared seeded one is not needed). */
const reachable = (bench: PostgresBench | null): bench is PostgresBench =>
  bench !== null && bench.version !== null;

/** How many rooms a subject's room list answered, read once before measuring (a wrong answer shows). */
/**
 * The subject's room list as the bench seeded it, or a thrown error: 200 rooms, and unread
 * counts of every kind the markers were seeded for (none, some, the cap of 100), so a seed
 * that misses its layout stops the group instead of measuring something else.
 */
async function checkUserRooms(server: ServerProcess): Promise<string> {
  const response = await fetch(`${server.baseUrl}/api/users/${USER_ROOMS_SUBJECT}/rooms`);
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error(`user-rooms: status ${response.status}: ${text.slice(0, 200)}`);
  }
  const rooms = JSON.parse(text) as { unread: number; lastRead: string | null }[];
  const unread = rooms.map((r) => r.unread);
  const kinds = {
    zero: unread.filter((u) => u === 0).length,
    some: unread.filter((u) => u > 0 && u < 100).length,
    capped: unread.filter((u) => u === 100).length,
    markers: rooms.filter((r) => r.lastRead !== null).length,
  };
  if (rooms.length !== 200 || kinds.zero === 0 || kinds.some === 0 || kinds.capped === 0) {
    throw new Error(
      `user-rooms: the seeded layout is not served: ${rooms.length} rooms, ${JSON.stringify(kinds)}`,
    );
  }
  return `${rooms.length} rooms (unread 0: ${kinds.zero}, 1-99: ${kinds.some}, 100: ${kinds.capped}; markers set: ${kinds.markers}), ${text.length} bytes`;
}

/**
 * GET /api/users/{subject}/rooms for a subject in 200 rooms, `large` messages
 * spread over 1,000 rooms (seed-rooms.ts), 10 connections, auth off (the
 * subject is in the path): SQLite and PostgreSQL in the same rounds as the floor.
 */
async function userRoomsGroup(
  cores: Cores,
  bench: PostgresBench | null,
  startService: StartService,
  stop: (server: ServerProcess) => Promise<void>,
  floor: (group: string, connections?: number) => Member,
  notes: string[],
  paths: SeedPaths,
): Promise<ScenarioResult[]> {
  const connections = USER_ROOMS_CONNECTIONS;
  const path = `/api/users/${USER_ROOMS_SUBJECT}/rooms`;
  const label = 'GET /api/users/{subject}/rooms (member of 200 rooms)';
  log(`user-rooms: seeding ${large} messages over 1,000 rooms, the subject in 200 (SQLite)`);
  const file = paths.dbFile('user-rooms');
  const sqliteLayout = userRoomsLayout();
  await seedSqlite(file, large, paths.idsFile('user-rooms'), sqliteLayout.fill);
  writeRoomsSqlite(file, sqliteLayout.layout());
  const servers: ServerProcess[] = [];
  try {
    const sqliteServer = await startService('user-rooms', { DATABASE_URL: `sqlite:${file}` });
    servers.push(sqliteServer);
    log(`  [user-rooms] SQLite answers ${await checkUserRooms(sqliteServer)}`);
    const members = [
      floor('user-rooms', connections),
      wrkMember(
        cores,
        sqliteServer,
        {
          id: 'user-rooms:sqlite',
          label,
          store: 'sqlite',
          stored: large,
          settings: { SQLITE_SYNCHRONOUS: 'full' },
          connections,
        },
        { path },
      ),
    ];
    if (reachable(bench)) {
      log(`user-rooms: seeding ${large} messages over 1,000 rooms (PostgreSQL)`);
      const url = bench.emptySchema();
      const pgLayout = userRoomsLayout();
      await seedPostgres(url, large, paths.idsFile('pg-user-rooms'), pgLayout.fill);
      await writeRoomsPostgres(url, pgLayout.layout());
      const pgServer = await startService('user-rooms-pg', { DATABASE_URL: url });
      servers.push(pgServer);
      log(`  [user-rooms] PostgreSQL answers ${await checkUserRooms(pgServer)}`);
      members.push(
        wrkMember(
          cores,
          pgServer,
          {
            id: 'user-rooms:postgres',
            label,
            store: 'postgres',
            stored: large,
            settings: { PG_POOL_SIZE: '10 (default)' },
            connections,
          },
          { path },
          bench.databaseCpu(pgServer),
        ),
      );
    } else {
      notes.push('user-rooms: PostgreSQL not reachable, SQLite only');
    }
    return await pairedRounds('user-rooms', members, 'user-rooms:floor');
  } finally {
    for (const server of servers) await stop(server);
    removeSqlite(file);
  }
}

/**
 * 1,000 authenticated SSE streams over 100 rooms (10 private), a writer
 * posting to random rooms (bench/room-streams.ts, pinned to the client core):
 * write-to-last-reader latency and events that reached a stream that may not
 * read their room. Auth on with a shared secret made for the run. Each store
 * holds the rooms and memberships only.
 */
async function streamsGroup(
  cores: Cores,
  bench: PostgresBench | null,
  startService: StartService,
  stop: (server: ServerProcess) => Promise<void>,
  dbFile: (name: string) => string,
  notes: string[],
): Promise<BenchResult['streams']> {
  const secret = randomBytes(32).toString('hex');
  const env = { AUTH_JWT_SECRET: secret };
  const measure = async (store: string, databaseUrl: string): Promise<StreamsRun | null> => {
    const server = await startService(`streams-${store}`, { ...env, DATABASE_URL: databaseUrl });
    try {
      const run = (await runJsonChild(
        pinned(cores, cores.client, [
          process.execPath,
          '--import',
          'tsx',
          'bench/room-streams.ts',
          server.baseUrl,
          secret,
          String(streamWrites),
        ]),
      )) as StreamsRun;
      log(
        `  [streams ${store}] ${run.streams} streams, ${run.writes} writes: p99 ${run.all.p99Ms} ms ` +
          `(public ${run.publicRooms.p99Ms}, private ${run.privateRoomsOnly.p99Ms}), ` +
          `undelivered ${run.undelivered}, leaks ${run.leaks}, duplicates ${run.duplicates}`,
      );
      return run;
    } catch (error) {
      notes.push(`streams ${store} failed: ${(error as Error).message.split('\n')[0]}`);
      log(`  [streams ${store}] failed: ${(error as Error).message}`);
      return null;
    } finally {
      await stop(server);
    }
  };
  log('streams: 1,000 authenticated streams, 100 rooms (10 private), SQLite');
  const file = dbFile('streams');
  await seedSqlite(file, 0, join(TMP, 'ids-streams.txt'));
  writeRoomsSqlite(file, streamsLayout());
  const sqliteRun = await measure('sqlite', `sqlite:${file}`);
  removeSqlite(file);
  let postgresRun: StreamsRun | null = null;
  if (reachable(bench)) {
    log('streams: the same on PostgreSQL');
    const url = bench.emptySchema();
    await migratePostgres(url);
    await writeRoomsPostgres(url, streamsLayout());
    postgresRun = await measure('postgres', url);
  } else {
    notes.push('streams: PostgreSQL not reachable, SQLite only');
  }
  return { sqlite: sqliteRun, postgres: postgresRun };
}

/** Starts a build on a fresh store so it migrates it itself, then stops it. */
async function migrateWith(
  startService: StartService,
  stop: (server: ServerProcess) => Promise<void>,
  cwd: string,
  databaseUrl: string,
): Promise<void> {
  await stop(await startService('migrate', { DATABASE_URL: databaseUrl }, cwd));
}

/**
 * GET by id, a history page, a room's history page and durable POST of this build and of the
 * baseline's, on SQLite and PostgreSQL at `large` stored, all in the same interleaved rounds. Both
 * builds hold the same kind of store: seeded in the baseline's schema (which
 * the baseline's build migrates itself), and for this build then upgraded by
 * its own migrations, as a store in production would be.
 */
async function baselineGroup(
  cores: Cores,
  bench: PostgresBench | null,
  build: BaselineBuild,
  startService: StartService,
  stop: (server: ServerProcess) => Promise<void>,
  floor: (group: string) => Member,
  paths: SeedPaths,
): Promise<ScenarioResult[]> {
  const servers: ServerProcess[] = [];
  const files = [paths.dbFile('baseline-old'), paths.dbFile('baseline-head')];
  try {
    log(`baseline ${build.commit}: seeding ${large} messages in its SQLite schema`);
    const [oldFile, headFile] = files as [string, string];
    removeSqlite(oldFile);
    await migrateWith(startService, stop, build.cwd, `sqlite:${oldFile}`);
    fillSqlite(oldFile, large, paths.idsFile('baseline'));
    copySqlite(oldFile, headFile);
    const upgrade = new SqliteStore({ filename: headFile, synchronous: 'off' });
    await upgrade.migrate();
    await upgrade.close();

    const pair = (
      store: 'sqlite' | 'postgres',
      head: ServerProcess,
      old: ServerProcess,
      ids: { head: string; old: string },
      roomIds: { head: string; old: string },
      databaseCpu?: (server: ServerProcess) => () => Promise<number>,
    ): Member[] => {
      const settings: Record<string, string> =
        store === 'sqlite' ? { SQLITE_SYNCHRONOUS: 'full' } : { PG_POOL_SIZE: '10 (default)' };
      const out: Member[] = [];
      for (const [kind, label, run] of [
        [
          'get',
          'GET /api/messages/{id}',
          (f: string) => ({ path: '/', script: 'get-by-id.lua', args: [f] }),
        ],
        [
          'history',
          'history page (order=desc, limit=50, before=id)',
          (f: string) => ({ path: '/', script: 'history.lua', args: [f] }),
        ],
        [
          'room-history',
          ROOM_HISTORY_LABEL,
          (_: string, rooms: string) => ({ path: '/', script: 'room-history.lua', args: [rooms] }),
        ],
        [
          'create',
          'POST /api/messages (durable)',
          () => ({ path: '/api/messages', script: 'create.lua' }),
        ],
      ] as const) {
        for (const [which, server, idsPath, roomIdsPath] of [
          ['head', head, ids.head, roomIds.head],
          ['baseline', old, ids.old, roomIds.old],
        ] as const) {
          out.push(
            wrkMember(
              cores,
              server,
              {
                id: `baseline:${store}-${kind}-${which}`,
                label: `${label}, ${which === 'head' ? 'this commit' : `baseline ${build.commit}`}`,
                store,
                stored: large,
                settings,
              },
              run(idsPath, roomIdsPath),
              databaseCpu?.(server),
            ),
          );
        }
      }
      return out;
    };

    const sqliteHead = await startService('baseline-sqlite-head', {
      DATABASE_URL: `sqlite:${headFile}`,
    });
    servers.push(sqliteHead);
    const sqliteOld = await startService(
      'baseline-sqlite-old',
      { DATABASE_URL: `sqlite:${oldFile}` },
      build.cwd,
    );
    servers.push(sqliteOld);
    const sqliteIds = paths.idsFile('baseline');
    const sqliteRooms = sqliteRoomIds(oldFile, sqliteIds, paths.idsFile('baseline-rooms'));
    const members = [
      floor('baseline'),
      ...pair(
        'sqlite',
        sqliteHead,
        sqliteOld,
        { head: sqliteIds, old: sqliteIds },
        { head: sqliteRooms, old: sqliteRooms },
      ),
    ];

    if (reachable(bench)) {
      log(`baseline ${build.commit}: seeding ${large} messages twice in its PostgreSQL schema`);
      const oldUrl = bench.emptySchema();
      await migrateWith(startService, stop, build.cwd, oldUrl);
      await fillPostgres(oldUrl, large, paths.idsFile('pg-baseline-old'));
      const headUrl = bench.emptySchema();
      await migrateWith(startService, stop, build.cwd, headUrl);
      await fillPostgres(headUrl, large, paths.idsFile('pg-baseline-head'));
      log('  upgrading the second schema with this build');
      await migratePostgres(headUrl);
      const client = await schemaClient(headUrl);
      await settleTables(client, ['messages', 'rooms']).finally(() => client.end());
      const pgHead = await startService('baseline-pg-head', { DATABASE_URL: headUrl });
      servers.push(pgHead);
      const pgOld = await startService('baseline-pg-old', { DATABASE_URL: oldUrl }, build.cwd);
      servers.push(pgOld);
      members.push(
        ...pair(
          'postgres',
          pgHead,
          pgOld,
          { head: paths.idsFile('pg-baseline-head'), old: paths.idsFile('pg-baseline-old') },
          {
            head: await postgresRoomIds(
              headUrl,
              paths.idsFile('pg-baseline-head'),
              paths.idsFile('pg-baseline-head-rooms'),
            ),
            old: await postgresRoomIds(
              oldUrl,
              paths.idsFile('pg-baseline-old'),
              paths.idsFile('pg-baseline-old-rooms'),
            ),
          },
          bench.databaseCpu,
        ),
      );
    }
    log(
      `baseline: GET by id, a history page, a room's page and durable POST, this commit and ${build.commit}, interleaved`,
    );
    return await pairedRounds('baseline', members, 'baseline:floor');
  } finally {
    for (const server of servers) await stop(server);
    for (const file of files) removeSqlite(file);
  }
}

/**
 * The production start (`node dist/server.js`) against `npm start` (tsx under
 * npm): time to ready, idle RSS of the whole process tree, and its peak under
 * a GET-by-id load. SQLite with `mid` messages.
 */
async function startGroup(cores: Cores, dbPath: string, idsPath: string): Promise<StartResult[]> {
  const modes = [
    { mode: 'production start', command: [process.execPath, 'dist/server.js'] },
    { mode: 'npm start', command: ['npm', 'start', '--silent'] },
  ];
  const results: StartResult[] = [];
  for (const { mode, command } of modes) {
    const result = {
      mode,
      command:
        command[0] === process.execPath ? `node ${command.slice(1).join(' ')}` : command.join(' '),
      processes: [] as string[],
      startMs: [] as number[],
      idleRssMiB: [] as number[],
      loadedRssMiB: [] as number[],
    };
    for (let run = 0; run < (quick ? 1 : 3); run++) {
      const port = await freePort();
      const tree = await startAndMeasure(pinned(cores, cores.server, command), {
        cwd: ROOT,
        env: { ...SERVICE_SETTINGS, DATABASE_URL: `sqlite:${dbPath}` },
        port,
        settleMs: 2000,
      });
      try {
        let peak = treeRss(tree.pid);
        const timer = setInterval(() => (peak = Math.max(peak, treeRss(tree.pid))), 50);
        await runWrk(
          cores,
          {
            url: `http://127.0.0.1:${port}/`,
            script: 'get-by-id.lua',
            args: [idsPath],
            seconds: plan.seconds,
            connections: plan.connections,
          },
          DIRS,
        );
        clearInterval(timer);
        result.processes = [...tree.cost.processes];
        result.startMs.push(tree.cost.startMs);
        result.idleRssMiB.push(tree.cost.idleRssMiB);
        result.loadedRssMiB.push(peak / MiB);
        log(
          `  [start] ${mode} run ${run + 1}: ready in ${tree.cost.startMs.toFixed(0)} ms, idle ` +
            `${tree.cost.idleRssMiB.toFixed(1)} MiB, loaded ${(peak / MiB).toFixed(1)} MiB (${result.processes.join(', ')})`,
        );
      } finally {
        await tree.stop();
      }
    }
    results.push(result);
  }
  return results;
}

await main();
