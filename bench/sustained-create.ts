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
  /** `--quick`: two windows of the quick rounds' length. */
  readonly quick: boolean;
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

/** Full runs: six windows of 10 s; quick runs two of the quick rounds' length. */
const FULL = { windows: 6, seconds: 10 };

/** A window's figure, or a dash where the window has none. */
const each = (values: readonly (number | null | undefined)[], digits: number) =>
  values.map((v) => (v == null ? '-' : v.toFixed(digits))).join(', ');

export async function sustainedGroup(
  ctx: SustainedContext,
): Promise<{ scenarios: ScenarioResult[]; notes: string[] }> {
  const shape = ctx.quick ? { windows: 2, seconds: ctx.round.plan.seconds } : FULL;
  // One member per run, so the "rounds" are consecutive windows of one server's load.
  const round: RoundContext = {
    ...ctx.round,
    plan: { ...ctx.round.plan, rounds: shape.windows, seconds: shape.seconds },
  };
  const total = shape.windows * shape.seconds;
  const scenarios: ScenarioResult[] = [];
  const notes: string[] = [
    `sustained: ${shape.windows} windows of ${shape.seconds} s per store, one after the other on ` +
      "one server, no floor (the header's rounds are the other groups')",
  ];
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
    const rates = windows.map((w) => Math.round(w.requestsPerSecond).toLocaleString('en'));
    notes.push(
      `sustained ${store}: creates/s by window ${rates.join(', ')}; ` +
        `p99 ms ${each(
          windows.map((w) => w.p99Ms),
          1,
        )}; service CPU µs a create ${each(
          windows.map((w) => w.serverCpuUsPerRequest),
          1,
        )}` +
        (databaseCpu === undefined
          ? ''
          : `; database CPU µs a create ${each(
              windows.map((w) => w.databaseCpuUsPerRequest),
              1,
            )}`),
    );
  };
  // Each store on its own: a failure leaves a note, and the other store is still measured.
  const guarded = async (store: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      notes.push(`sustained ${store} failed: ${(error as Error).message.split('\n')[0]}`);
    }
  };

  await guarded('sqlite', async () => {
    try {
      copySqlite(ctx.sqlite.file, ctx.sqlite.copy);
      const sqlite = await ctx.startService('sustained-sqlite', {
        DATABASE_URL: `sqlite:${ctx.sqlite.copy}`,
        SQLITE_SYNCHRONOUS: 'full',
      });
      try {
        await run('sqlite', sqlite, { SQLITE_SYNCHRONOUS: 'full' });
      } finally {
        await ctx.stop(sqlite);
      }
    } finally {
      removeSqlite(ctx.sqlite.copy);
    }
  });
  const postgres = ctx.postgres;
  if (postgres !== null) {
    await guarded('postgres', async () => {
      const pg = await ctx.startService('sustained-postgres', { DATABASE_URL: postgres.url });
      try {
        await run('postgres', pg, { PG_POOL_SIZE: '10 (default)' }, postgres.databaseCpu(pg));
      } finally {
        await ctx.stop(pg);
      }
    });
  }
  return { scenarios, notes };
}
