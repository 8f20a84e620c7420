/**
 * Durable creates without a pause, on each store at `large` stored: one
 * server taking creates at 50 connections for back-to-back windows (60 s in
 * all), each window a sample. The create group's 5 s rounds, interleaved
 * with other servers, end before a search index's upkeep comes due (SQLite's
 * FTS5 segment merges, PostgreSQL's GIN pending-list flushes); here it falls
 * inside the run, and the windows show whether the rate holds and where the
 * tail latency goes. No floor: the figures are the windows themselves, first
 * against last.
 */
import { copySqlite, removeSqlite } from './seed-data.ts';
import type { ScenarioResult } from './bench-types.ts';
import { pairedRounds, wrkMember, type RoundContext } from './paired-rounds.ts';
import type { ServerProcess } from './server-process.ts';

export interface SustainedContext {
  readonly round: RoundContext;
  readonly large: number;
  /** The seeded SQLite file (copied, never written) and the copy's path. */
  readonly sqlite: { readonly file: string; readonly copy: string };
  /** The seeded PostgreSQL schema: it keeps the rows created here. */
  readonly postgres: {
    readonly url: string;
    databaseCpu(server: ServerProcess): () => Promise<number>;
  } | null;
  startService(name: string, env: Record<string, string>): Promise<ServerProcess>;
  stop(server: ServerProcess): Promise<void>;
}

/** Full runs: six windows of 10 s. */
const FULL = { windows: 6, seconds: 10 };

export async function sustainedGroup(
  ctx: SustainedContext,
): Promise<{ scenarios: ScenarioResult[]; notes: string[] }> {
  const quick = ctx.round.plan.rounds < 4;
  const shape = quick ? { windows: 2, seconds: ctx.round.plan.seconds } : FULL;
  // One member per run, so the "rounds" are consecutive windows of one server's load.
  const round: RoundContext = {
    ...ctx.round,
    plan: { ...ctx.round.plan, rounds: shape.windows, seconds: shape.seconds },
  };
  const total = shape.windows * shape.seconds;
  const scenarios: ScenarioResult[] = [];
  const notes: string[] = [];
  const run = async (
    store: 'sqlite' | 'postgres',
    server: ServerProcess,
    settings: Record<string, string>,
    databaseCpu?: () => Promise<number>,
  ) => {
    ctx.round.log(`sustained: ${store}, durable creates for ${total} s at ${ctx.large} stored`);
    const member = wrkMember(
      round,
      server,
      {
        id: `sustained:${store}-create`,
        label: `POST /api/messages (durable), ${shape.windows} back-to-back windows of ${shape.seconds} s`,
        store,
        stored: ctx.large,
        settings,
      },
      { path: '/api/messages', script: 'create.lua' },
      databaseCpu,
    );
    const [result] = await pairedRounds(round, 'sustained', [member], null);
    scenarios.push(result!);
    const windows = result!.samples;
    const list = (f: (s: (typeof windows)[number]) => string) => windows.map(f).join(', ');
    notes.push(
      `sustained ${store}: creates/s by window ${list((s) => Math.round(s.requestsPerSecond).toLocaleString('en'))}; ` +
        `p99 ms ${list((s) => s.p99Ms.toFixed(1))}` +
        (windows[0]?.serverCpuUsPerRequest == null
          ? ''
          : `; service CPU µs a create ${list((s) => s.serverCpuUsPerRequest!.toFixed(1))}`),
    );
  };

  copySqlite(ctx.sqlite.file, ctx.sqlite.copy);
  const sqlite = await ctx.startService('sustained-sqlite', {
    DATABASE_URL: `sqlite:${ctx.sqlite.copy}`,
    SQLITE_SYNCHRONOUS: 'full',
  });
  try {
    await run('sqlite', sqlite, { SQLITE_SYNCHRONOUS: 'full' });
  } finally {
    await ctx.stop(sqlite);
    removeSqlite(ctx.sqlite.copy);
  }
  if (ctx.postgres !== null) {
    const pg = await ctx.startService('sustained-postgres', { DATABASE_URL: ctx.postgres.url });
    try {
      await run('postgres', pg, { PG_POOL_SIZE: '10 (default)' }, ctx.postgres.databaseCpu(pg));
    } finally {
      await ctx.stop(pg);
    }
  }
  return { scenarios, notes };
}
