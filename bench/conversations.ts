/**
 * The `conversations` group of `npm run bench` (issue #12): a client showing
 * a conversation reads a history page of 50 messages and then the reaction
 * summaries of exactly those 50 (two requests), at `large` stored messages
 * and a fifth as many reactions (seed-reactions.ts), 50 connections, on
 * SQLite and PostgreSQL, interleaved with the floor.
 *
 * Members per store, in the same rounds:
 * - the pair (lua/conversations.lua, one wrk thread per connection): pairs/s,
 *   the pair's own latency (page sent -> summaries received, recorded in
 *   Lua), CPU per pair; each kind's rate and latency within the mix become
 *   scenarios of their own (`-pair-page`, `-pair-summaries`);
 * - the history page alone (lua/history.lua) and the summaries alone
 *   (lua/summaries.lua over pages read from the store): each kind's own CPU
 *   per request, which the mix cannot split.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Sample, ScenarioResult } from './bench-types.ts';
import {
  median,
  pairedRounds,
  wrkMember,
  type Member,
  type RoundContext,
} from './paired-rounds.ts';
import { random } from './chat-text.ts';
import { copySqlite, removeSqlite, schemaClient } from './seed-data.ts';
import {
  seedPostgresReactions,
  seedSqliteReactions,
  type ReactionSpread,
} from './seed-reactions.ts';
import { sampleRss, type ServerProcess } from './server-process.ts';
import { errorCount, runWrk } from './wrk-runner.ts';

const MiB = 2 ** 20;
/** Reactions per stored message: 200,000 at 1,000,000. */
const REACTIONS_PER_MESSAGE = 0.2;
/** Stored pages whose summaries the summaries-only member asks for. */
export const SUMMARY_PAGES = 2000;
/** `before` ids the pair script draws from (each wrk thread loads the list). */
const BEFORE_IDS = 10_000;

export interface ConversationsContext {
  readonly round: RoundContext;
  readonly tmp: string;
  readonly large: number;
  /** The `large` SQLite file and its id sample (seeded by the harness; copied here, not changed). */
  readonly sqlite: { readonly file: string; readonly ids: string };
  /** The `large` PostgreSQL schema and its id sample (reactions are added to it), if reachable. */
  readonly postgres: {
    readonly url: string;
    readonly ids: string;
    databaseCpu(server: ServerProcess): () => Promise<number>;
  } | null;
  floor(group: string): Member;
  startService(name: string, env: Record<string, string>): Promise<ServerProcess>;
  stop(server: ServerProcess): Promise<void>;
}

/** What conversations.lua prints per run (WRK_EXTRA). */
interface KindFigures {
  readonly count: number;
  readonly perSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
}
interface PairExtra {
  readonly page: KindFigures;
  readonly summary: KindFigures;
  readonly pair: KindFigures;
  readonly badPages: number;
  readonly badSummaries: number;
  readonly emptyPages: number;
  readonly emojiSeen: number;
}

/**
 * A seeded random subset of an id sample (the same draw every run),
 * leaving out the first few of the table: a page before them would be short or empty, and an
 * empty page has no summaries to ask for (conversations.lua counts one as an error).
 */
export function subset(ids: readonly string[], n: number): string[] {
  const usable = ids.slice(Math.min(ids.length - 1, Math.ceil(ids.length / 1000)));
  const out: string[] = [];
  const next = random(n);
  for (let i = 0; i < n; i++) out.push(usable[Math.floor(next() * usable.length)]!);
  return out;
}

export function readIds(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
}

const query = (ids: readonly string[]) => ids.map((id) => `messageId=${id}`).join('&');

/** The summaries' queries of `SUMMARY_PAGES` stored history pages, read from SQLite. */
export function sqlitePages(file: string, befores: readonly string[]): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const page = db
      .prepare('SELECT id FROM messages WHERE id < ? ORDER BY id DESC LIMIT 50')
      .pluck();
    return befores.map((b) => query(page.all(b) as string[])).filter((q) => q.length > 0);
  } finally {
    db.close();
  }
}

async function postgresPages(url: string, befores: readonly string[]): Promise<string[]> {
  const client = await schemaClient(url);
  try {
    const out: string[] = [];
    for (const b of befores) {
      const { rows } = await client.query<{ id: string }>(
        'SELECT id::text AS id FROM messages WHERE id < $1::uuid ORDER BY id DESC LIMIT 50',
        [b],
      );
      if (rows.length > 0) out.push(query(rows.map((r) => r.id)));
    }
    return out;
  } finally {
    await client.end();
  }
}

/**
 * The pair member: conversations.lua with one thread per connection. Its
 * sample is per pair (pairs/s, the pair's latency, CPU per pair); each run's
 * per-kind figures are kept in `extras` (the first run is the warm-up).
 */
function pairMember(
  ctx: ConversationsContext,
  server: ServerProcess,
  meta: Omit<Member, 'measure'>,
  beforeIds: string,
  extras: PairExtra[],
  databaseCpu?: () => Promise<number>,
): Member {
  return {
    ...meta,
    measure: async (seconds): Promise<Omit<Sample, 'round'>> => {
      const connections = meta.connections ?? ctx.round.plan.connections;
      const rss = sampleRss(server.pid);
      const cpuBefore = server.cpuSeconds();
      const dbBefore = await databaseCpu?.();
      const result = await runWrk(
        ctx.round.cores,
        {
          url: `${server.baseUrl}/`,
          script: 'conversations.lua',
          args: [beforeIds],
          seconds,
          connections,
          threads: connections,
        },
        ctx.round.dirs,
      );
      const { peak } = rss.stop();
      const cpu = server.cpuSeconds() - cpuBefore;
      const db = dbBefore === undefined ? undefined : (await databaseCpu!()) - dbBefore;
      const extra = result.extra as PairExtra | undefined;
      if (extra === undefined) throw new Error('conversations.lua printed no WRK_EXTRA line');
      extras.push(extra);
      const pairs = Math.max(1, extra.pair.count);
      return {
        requestsPerSecond: extra.pair.perSecond,
        p50Ms: extra.pair.p50Us / 1000,
        p99Ms: extra.pair.p99Us / 1000,
        errors: errorCount(result) + extra.emptyPages,
        serverRssMiB: Number.isNaN(peak) ? null : peak / MiB,
        serverCpuUsPerRequest: Number.isNaN(cpu) ? null : (cpu * 1e6) / pairs,
        databaseCpuUsPerRequest: db === undefined ? null : (db * 1e6) / pairs,
      };
    },
  };
}

/** One kind's figures within the pair runs, as a scenario of its own (CPU: see the alone members). */
function kindScenario(
  pair: ScenarioResult,
  floor: ScenarioResult,
  extras: readonly PairExtra[],
  kind: 'page' | 'summary',
): ScenarioResult {
  const rounds = extras.slice(1);
  const samples: Sample[] = rounds.map((e, round) => ({
    round,
    requestsPerSecond: e[kind].perSecond,
    p50Ms: e[kind].p50Us / 1000,
    p99Ms: e[kind].p99Us / 1000,
    errors: kind === 'page' ? e.badPages + e.emptyPages : e.badSummaries,
    serverRssMiB: pair.samples[round]?.serverRssMiB ?? null,
    serverCpuUsPerRequest: null,
  }));
  return {
    id: `${pair.id}-${kind === 'page' ? 'page' : 'summaries'}`,
    group: pair.group,
    label:
      kind === 'page'
        ? 'within the pair: the history page (order=desc, limit=50, before=id)'
        : "within the pair: GET /api/reactions of that page's 50 ids",
    store: pair.store,
    stored: pair.stored,
    connections: pair.connections,
    settings: pair.settings,
    samples,
    summary: {
      requestsPerSecond: median(samples.map((s) => s.requestsPerSecond)),
      p50Ms: median(samples.map((s) => s.p50Ms)),
      p99Ms: median(samples.map((s) => s.p99Ms)),
      worstP99Ms: Math.max(...samples.map((s) => s.p99Ms)),
      errors: samples.reduce((sum, s) => sum + s.errors, 0),
      serverRssMiB: pair.summary.serverRssMiB,
      serverCpuUsPerRequest: null,
      databaseCpuUsPerRequest: null,
    },
    ratioToFloor: median(
      samples.map((s, i) => s.requestsPerSecond / floor.samples[i]!.requestsPerSecond),
    ),
  };
}

const spreadNote = (store: string, s: ReactionSpread) =>
  `conversations ${store}: ${s.reactions.toLocaleString('en')} reactions on ` +
  `${s.reactedMessages.toLocaleString('en')} messages (1 reactor: ${s.byReactors[0]}, 2-5: ` +
  `${s.byReactors[1]}, 6-50: ${s.byReactors[2]}, 51+: ${s.byReactors[3]}; at most ` +
  `${s.maxReactors}), seeded in ${s.seconds.toFixed(1)} s`;

export async function conversationsGroup(
  ctx: ConversationsContext,
): Promise<{ scenarios: ScenarioResult[]; notes: string[] }> {
  const notes: string[] = [];
  const log = ctx.round.log;
  const total = Math.round(ctx.large * REACTIONS_PER_MESSAGE);
  const file = join(ctx.tmp, 'conversations.db');
  const servers: ServerProcess[] = [];
  const extras = new Map<string, PairExtra[]>();
  try {
    log(`conversations: ${total} reactions on a copy of the ${ctx.large}-message SQLite store`);
    copySqlite(ctx.sqlite.file, file);
    const sqliteSpread = seedSqliteReactions(file, total);
    notes.push(spreadNote('SQLite', sqliteSpread));
    log(`  ${notes.at(-1)}`);

    const members: Member[] = [ctx.floor('conversations')];
    const addStore = async (
      store: 'sqlite' | 'postgres',
      server: ServerProcess,
      idsFile: string,
      pages: string[],
      settings: Record<string, string>,
      databaseCpu?: () => Promise<number>,
    ) => {
      const beforeIds = join(ctx.tmp, `conversations-before-${store}.txt`);
      writeFileSync(beforeIds, `${subset(readIds(idsFile), BEFORE_IDS).join('\n')}\n`);
      const pagesFile = join(ctx.tmp, `conversations-pages-${store}.txt`);
      writeFileSync(pagesFile, `${pages.join('\n')}\n`);
      const meta = { store, stored: ctx.large, settings };
      const id = `conversations:${store}-pair`;
      const own: PairExtra[] = [];
      extras.set(id, own);
      members.push(
        pairMember(
          ctx,
          server,
          {
            id,
            label:
              'pair: history page, then the reaction summaries of its 50 ids (req/s = pairs/s, CPU per pair, latency page sent -> summaries received)',
            ...meta,
          },
          beforeIds,
          own,
          databaseCpu,
        ),
        wrkMember(
          ctx.round,
          server,
          {
            id: `conversations:${store}-page`,
            label: 'alone: history page (order=desc, limit=50, before=id)',
            ...meta,
          },
          { path: '/', script: 'history.lua', args: [beforeIds] },
          databaseCpu,
        ),
        wrkMember(
          ctx.round,
          server,
          {
            id: `conversations:${store}-summaries`,
            label: "alone: GET /api/reactions of a stored page's 50 ids",
            ...meta,
          },
          { path: '/', script: 'summaries.lua', args: [pagesFile] },
          databaseCpu,
        ),
      );
    };

    const sqliteServer = await ctx.startService('conversations-sqlite', {
      DATABASE_URL: `sqlite:${file}`,
    });
    servers.push(sqliteServer);
    const befores = subset(readIds(ctx.sqlite.ids), SUMMARY_PAGES);
    await addStore('sqlite', sqliteServer, ctx.sqlite.ids, sqlitePages(file, befores), {
      SQLITE_SYNCHRONOUS: 'full',
    });

    if (ctx.postgres !== null) {
      log(`conversations: ${total} reactions into the ${ctx.large}-message PostgreSQL schema`);
      const pgSpread = await seedPostgresReactions(ctx.postgres.url, total);
      notes.push(spreadNote('PostgreSQL', pgSpread));
      log(`  ${notes.at(-1)}`);
      const pgServer = await ctx.startService('conversations-postgres', {
        DATABASE_URL: ctx.postgres.url,
      });
      servers.push(pgServer);
      const pgBefores = subset(readIds(ctx.postgres.ids), SUMMARY_PAGES);
      await addStore(
        'postgres',
        pgServer,
        ctx.postgres.ids,
        await postgresPages(ctx.postgres.url, pgBefores),
        { PG_POOL_SIZE: '10 (default)' },
        ctx.postgres.databaseCpu(pgServer),
      );
    } else {
      notes.push('conversations: PostgreSQL not reachable, SQLite only');
    }

    log('conversations: page + summaries pairs, each kind alone, 50 connections, interleaved');
    const scenarios = await pairedRounds(
      ctx.round,
      'conversations',
      members,
      'conversations:floor',
    );
    const floor = scenarios.find((s) => s.id === 'conversations:floor')!;
    const out: ScenarioResult[] = [];
    for (const s of scenarios) {
      out.push(s);
      const own = extras.get(s.id);
      if (own === undefined) continue;
      out.push(kindScenario(s, floor, own, 'page'), kindScenario(s, floor, own, 'summary'));
      const rounds = own.slice(1);
      const summaries = rounds.reduce((n, e) => n + e.summary.count, 0);
      const emoji = rounds.reduce((n, e) => n + e.emojiSeen, 0);
      notes.push(
        `conversations ${s.store}: ${summaries.toLocaleString('en')} summary responses measured held ` +
          `${(emoji / Math.max(1, summaries)).toFixed(1)} emoji entries each on average`,
      );
    }
    return { scenarios: out, notes };
  } finally {
    for (const server of servers) await ctx.stop(server);
    removeSqlite(file);
  }
}
