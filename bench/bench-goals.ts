/** The goals of issue #5, each judged from the figures of one run. */
import type { BenchResult, Goal, ScenarioResult, StreamsRun } from './bench-types.ts';
import { median } from './paired-rounds.ts';

interface Sizes {
  readonly small: number;
  readonly mid: number;
  readonly large: number;
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Median over rounds of a's req/s divided by b's in the same round. */
export function pairedRatio(a: ScenarioResult, b: ScenarioResult): number {
  return median(a.samples.map((s, i) => s.requestsPerSecond / b.samples[i]!.requestsPerSecond));
}

function missing(figure: string, goal: string): Goal {
  return {
    figure,
    goal,
    measured: 'not measured in this run',
    short: 'not measured',
    met: null,
    score: null,
  };
}

export function computeGoals(result: BenchResult, sizes: Sizes): Goal[] {
  const find = (id: string) => result.scenarios.find((s) => s.id === id);
  const goals: Goal[] = [];

  const get = find('get:sqlite');
  {
    const figure = `GET by id, 50 connections, SQLite, ${fmt(sizes.mid)} stored`;
    const goal = '≥ 0.65× the node:http floor (aim 0.75×)';
    if (get?.ratioToFloor == null) goals.push(missing(figure, goal));
    else {
      const ratio = get.ratioToFloor;
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(2)}× (${fmt(get.summary.requestsPerSecond)}/s vs floor ${fmt(find('get:floor')!.summary.requestsPerSecond)}/s)`,
        short: `${ratio.toFixed(2)}× floor`,
        met: ratio >= 0.65,
        score: ratio / 0.65,
      });
    }
  }

  const durable = find(`create:durable-${sizes.small}`);
  const off = find(`create:fsync-off-${sizes.small}`);
  {
    const figure = 'POST create, durable (fsync on), 50 connections, SQLite';
    const goal = '≥ 0.85× fsync off, same run; ≥ 7,500/s';
    if (durable === undefined || off === undefined) goals.push(missing(figure, goal));
    else {
      const ratio = pairedRatio(durable, off);
      const rate = durable.summary.requestsPerSecond;
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(2)}× fsync off (${fmt(rate)}/s vs ${fmt(off.summary.requestsPerSecond)}/s)`,
        short: `${ratio.toFixed(2)}× fsync off, ${fmt(rate)}/s`,
        met: ratio >= 0.85 && rate >= 7500,
        score: Math.min(ratio / 0.85, rate / 7500),
      });
    }
  }

  {
    const figure = 'p99 latency at 50 connections';
    const goal = 'GET ≤ 5 ms, durable POST ≤ 15 ms, 0 errors';
    if (get === undefined || durable === undefined) goals.push(missing(figure, goal));
    else {
      const errors = result.scenarios
        .filter((s) => s.store !== 'none')
        .reduce((sum, s) => sum + s.summary.errors, 0);
      const getP99 = get.summary.p99Ms;
      const postP99 = durable.summary.p99Ms;
      goals.push({
        figure,
        goal,
        measured: `GET ${getP99.toFixed(2)} ms (worst round ${get.summary.worstP99Ms.toFixed(2)}), POST ${postP99.toFixed(2)} ms (worst ${durable.summary.worstP99Ms.toFixed(2)}), ${errors} errors in all scenarios`,
        short: `GET ${getP99.toFixed(1)} ms, POST ${postP99.toFixed(1)} ms, ${errors} errors`,
        met: getP99 <= 5 && postP99 <= 15 && errors === 0,
        score: errors > 0 ? 0 : Math.min(5 / getP99, 15 / postP99),
      });
    }
  }

  const historySmall = find(`size:history-${sizes.small}`);
  const historyLarge = find(`size:history-${sizes.large}`);
  {
    const figure = `history page (desc, limit 50) at ${fmt(sizes.large)} stored`;
    const goal = `within 10% of the same at ${fmt(sizes.small)} stored`;
    if (historySmall === undefined || historyLarge === undefined) goals.push(missing(figure, goal));
    else {
      const ratio = pairedRatio(historyLarge, historySmall);
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(3)}× (${fmt(historyLarge.summary.requestsPerSecond)}/s vs ${fmt(historySmall.summary.requestsPerSecond)}/s; p50 ${historyLarge.summary.p50Ms.toFixed(2)} vs ${historySmall.summary.p50Ms.toFixed(2)} ms)`,
        short: `${ratio.toFixed(2)}× the small store`,
        met: ratio >= 0.9,
        score: ratio / 0.9,
      });
    }
  }

  {
    const figure = `list everything, ${fmt(result.list?.stored ?? sizes.large)} messages`;
    const goal = '≥ 200,000 messages/s streamed, server RSS growth < 64 MiB';
    const runs = result.list?.runs ?? [];
    if (runs.length === 0) goals.push(missing(figure, goal));
    else {
      const slowest = Math.min(...runs.map((r) => r.messagesPerSecond));
      const growth = Math.max(...runs.map((r) => r.rssGrowthMiB));
      const complete = runs.every((r) => r.complete);
      goals.push({
        figure,
        goal,
        measured: `${fmt(slowest)} messages/s (slowest of ${runs.length} runs), RSS growth ≤ ${growth.toFixed(1)} MiB${complete ? '' : ', INCOMPLETE body'}`,
        short: `${fmt(slowest)}/s, +${growth.toFixed(0)} MiB`,
        met: slowest >= 200_000 && growth < 64 && complete,
        score: Math.min(slowest / 200_000, 64 / Math.max(growth, 1)),
      });
    }
  }

  for (const [mode, label] of [
    ['get', 'GET by id'],
    ['create', 'durable POST'],
  ] as const) {
    const figure = `PostgreSQL: ${label}`;
    const goal = '≥ 0.5× node-postgres in-process at concurrency 32';
    const service = find(`postgres:${mode}`);
    const pgFloor = find(`postgres:pg-floor-${mode}`);
    if (service === undefined || pgFloor === undefined) goals.push(missing(figure, goal));
    else {
      const ratio = pairedRatio(service, pgFloor);
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(2)}× (${fmt(service.summary.requestsPerSecond)}/s vs ${fmt(pgFloor.summary.requestsPerSecond)}/s in-process)`,
        short: `${ratio.toFixed(2)}× in-process pg`,
        met: ratio >= 0.5,
        score: ratio / 0.5,
      });
    }
  }
  goals.push(...performanceSecondPass(result, sizes, find));
  goals.push(...roomsGoals(result, sizes, find));
  goals.push(...aroundGoals(sizes, find));
  goals.push(...conversationGoals(sizes, find));
  return goals;
}

/**
 * Issue #12: a conversation view (a history page, then its 50 messages' reaction summaries) at
 * `large` stored and a fifth as many reactions, 50 connections. The pair's own latency, from
 * the page's request to the summaries' response, recorded per pair (bench/conversations.ts).
 */
function conversationGoals(sizes: Sizes, find: (id: string) => ScenarioResult | undefined): Goal[] {
  const goals: Goal[] = [];
  const us = (s: ScenarioResult | undefined) => s?.summary.serverCpuUsPerRequest?.toFixed(0) ?? '?';
  const db = (s: ScenarioResult | undefined) =>
    s?.summary.databaseCpuUsPerRequest == null
      ? ''
      : ` + database ${s.summary.databaseCpuUsPerRequest.toFixed(0)}`;
  for (const [store, name] of STORES) {
    const figure = `history page + its reaction summaries (two requests), ${name}, ${fmt(sizes.large)} stored, ${fmt(sizes.large / 5)} reactions, 50 connections`;
    const goal = "the pair's p99 ≤ 10 ms, 0 errors";
    const pair = find(`conversations:${store}-pair`);
    if (pair === undefined) goals.push(missing(figure, goal));
    else {
      const page = find(`conversations:${store}-pair-page`);
      const summaries = find(`conversations:${store}-pair-summaries`);
      const alonePage = find(`conversations:${store}-page`);
      const aloneSummaries = find(`conversations:${store}-summaries`);
      const p99 = pair.summary.p99Ms;
      goals.push({
        figure,
        goal,
        measured:
          `pair p99 ${p99.toFixed(2)} ms (worst round ${pair.summary.worstP99Ms.toFixed(2)}, p50 ${pair.summary.p50Ms.toFixed(2)}), ` +
          `${fmt(pair.summary.requestsPerSecond)} pairs/s; within it page p99 ${page?.summary.p99Ms.toFixed(2) ?? '?'} ms, ` +
          `summaries p99 ${summaries?.summary.p99Ms.toFixed(2) ?? '?'} ms; CPU µs per pair ${us(pair)}${db(pair)} ` +
          `(alone: page ${us(alonePage)}${db(alonePage)}, summaries ${us(aloneSummaries)}${db(aloneSummaries)}); ` +
          `${pair.summary.errors} errors`,
        short: `pair p99 ${p99.toFixed(1)} ms`,
        met: p99 <= 10 && pair.summary.errors === 0,
        score: pair.summary.errors > 0 ? 0 : 10 / p99,
      });
    }
  }
  return goals;
}

/** Conversations: a jump to a message costs what a history page costs. */
function aroundGoals(sizes: Sizes, find: (id: string) => ScenarioResult | undefined): Goal[] {
  const goals: Goal[] = [];
  for (const [store, name] of STORES) {
    const figure = `page around a message (desc, limit 50), ${name}, ${fmt(sizes.large)} stored`;
    const goal = 'within 10% of a plain history page (≥ 0.9× its rate, same rounds)';
    const around = find(`history:${store}-around`);
    const history = find(`history:${store}-history`);
    if (around === undefined || history === undefined) goals.push(missing(figure, goal));
    else {
      const ratio = pairedRatio(around, history);
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(2)}× the history page (${fmt(around.summary.requestsPerSecond)}/s vs ${fmt(history.summary.requestsPerSecond)}/s; p99 ${around.summary.p99Ms.toFixed(2)} vs ${history.summary.p99Ms.toFixed(2)} ms)`,
        short: `${ratio.toFixed(2)}× history page`,
        met: ratio >= 0.9,
        score: ratio / 0.9,
      });
    }
  }
  return goals;
}

/** The goals of the second performance pass (1M messages on both stores, production start). */
function performanceSecondPass(
  result: BenchResult,
  sizes: Sizes,
  find: (id: string) => ScenarioResult | undefined,
): Goal[] {
  const goals: Goal[] = [];
  const floorOf = (group: string) => find(`${group}:floor`)?.summary.requestsPerSecond ?? 0;
  const sqliteHistory = find('history:sqlite-history');
  const pgHistory = find('history:postgres-history');
  {
    const figure = `history page (desc, limit 50, before), SQLite, ${fmt(sizes.large)} stored`;
    const goal = '≥ 0.12× the node:http floor';
    if (sqliteHistory?.ratioToFloor == null) goals.push(missing(figure, goal));
    else {
      const ratio = sqliteHistory.ratioToFloor;
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(3)}× (${fmt(sqliteHistory.summary.requestsPerSecond)}/s vs floor ${fmt(floorOf('history'))}/s; ${sqliteHistory.summary.serverCpuUsPerRequest?.toFixed(0) ?? '?'} µs CPU per page)`,
        short: `${ratio.toFixed(3)}× floor`,
        met: ratio >= 0.12,
        score: ratio / 0.12,
      });
    }
  }
  {
    const figure = `history page, PostgreSQL, ${fmt(sizes.large)} stored`;
    const goal = "≥ 0.5× SQLite's rate in the same rounds, p99 ≤ 15 ms";
    if (sqliteHistory === undefined || pgHistory === undefined) goals.push(missing(figure, goal));
    else {
      const ratio = pairedRatio(pgHistory, sqliteHistory);
      const p99 = pgHistory.summary.p99Ms;
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(2)}× SQLite (${fmt(pgHistory.summary.requestsPerSecond)}/s vs ${fmt(sqliteHistory.summary.requestsPerSecond)}/s), p99 ${p99.toFixed(2)} ms (worst round ${pgHistory.summary.worstP99Ms.toFixed(2)}), ${pgHistory.summary.errors} errors`,
        short: `${ratio.toFixed(2)}× SQLite, p99 ${p99.toFixed(1)} ms`,
        met: ratio >= 0.5 && p99 <= 15 && pgHistory.summary.errors === 0,
        score: Math.min(ratio / 0.5, 15 / p99),
      });
    }
  }
  {
    const figure = `list everything, PostgreSQL, ${fmt(sizes.large)} messages`;
    const goal = "≥ 0.5× SQLite's messages/s; RSS growth < 64 MiB on both stores";
    const sqliteRuns = result.list?.runs ?? [];
    const pgRuns = result.postgresList?.runs ?? [];
    if (sqliteRuns.length === 0 || pgRuns.length === 0) goals.push(missing(figure, goal));
    else {
      const rate = (runs: readonly { messagesPerSecond: number }[]) =>
        median(runs.map((r) => r.messagesPerSecond));
      const ratio = rate(pgRuns) / rate(sqliteRuns);
      const growth = Math.max(...[...sqliteRuns, ...pgRuns].map((r) => r.rssGrowthMiB));
      const complete = [...sqliteRuns, ...pgRuns].every((r) => r.complete);
      goals.push({
        figure,
        goal,
        measured: `${ratio.toFixed(2)}× (${fmt(rate(pgRuns))}/s vs SQLite ${fmt(rate(sqliteRuns))}/s, medians of ${pgRuns.length} runs), RSS growth ≤ ${growth.toFixed(1)} MiB${complete ? '' : ', INCOMPLETE body'}`,
        short: `${ratio.toFixed(2)}× SQLite, +${growth.toFixed(0)} MiB`,
        met: ratio >= 0.5 && growth < 64 && complete,
        score: Math.min(ratio / 0.5, 64 / Math.max(growth, 1)),
      });
    }
  }
  for (const [id, stored] of [
    ['history:sqlite-get', sizes.large],
    ['get:sqlite', sizes.mid],
  ] as const) {
    const figure = `GET by id, SQLite, ${fmt(stored)} stored`;
    const goal = '≥ 0.55× the node:http floor';
    const get = find(id);
    if (get?.ratioToFloor == null) goals.push(missing(figure, goal));
    else {
      goals.push({
        figure,
        goal,
        measured: `${get.ratioToFloor.toFixed(2)}× (${fmt(get.summary.requestsPerSecond)}/s, ${get.summary.serverCpuUsPerRequest?.toFixed(1) ?? '?'} µs CPU per request)`,
        short: `${get.ratioToFloor.toFixed(2)}× floor`,
        met: get.ratioToFloor >= 0.55,
        score: get.ratioToFloor / 0.55,
      });
    }
  }
  {
    const figure = 'PostgreSQL durable creates: CPU per create (service + database)';
    const goal = 'before (baseline) and after, same rounds: less after';
    const after = find('pg-create:current');
    const before = find('pg-create:baseline');
    const cpu = (s: ScenarioResult) =>
      (s.summary.serverCpuUsPerRequest ?? 0) + (s.summary.databaseCpuUsPerRequest ?? 0);
    const describe = (s: ScenarioResult) =>
      `${cpu(s).toFixed(0)} µs (service ${s.summary.serverCpuUsPerRequest?.toFixed(0) ?? '?'} + database ${s.summary.databaseCpuUsPerRequest?.toFixed(0) ?? '?'}), ${fmt(s.summary.requestsPerSecond)}/s`;
    if (after === undefined || before === undefined) goals.push(missing(figure, goal));
    else {
      goals.push({
        figure,
        goal,
        measured: `after ${describe(after)}; before (${result.baseline ?? 'baseline'}) ${describe(before)}; database CPU ${((after.summary.databaseCpuUsPerRequest ?? 0) / (before.summary.databaseCpuUsPerRequest ?? 1)).toFixed(2)}× before`,
        short: `${cpu(after).toFixed(0)} vs ${cpu(before).toFixed(0)} µs`,
        met: cpu(after) < cpu(before),
        score: cpu(before) / cpu(after),
      });
    }
  }
  {
    const figure = 'production start (node dist/server.js) vs npm start';
    const goal = 'start time, idle and loaded RSS of the process tree: less';
    const prod = result.start?.find((s) => s.mode === 'production start');
    const npm = result.start?.find((s) => s.mode === 'npm start');
    if (prod === undefined || npm === undefined) goals.push(missing(figure, goal));
    else {
      const m = (values: readonly number[]) => median(values);
      const line = (s: typeof prod) =>
        `${m(s.startMs).toFixed(0)} ms, idle ${m(s.idleRssMiB).toFixed(0)} MiB, loaded ${m(s.loadedRssMiB).toFixed(0)} MiB (${s.processes.join(' + ')})`;
      goals.push({
        figure,
        goal,
        measured: `production: ${line(prod)}; npm start: ${line(npm)}`,
        short: `${m(prod.startMs).toFixed(0)} vs ${m(npm.startMs).toFixed(0)} ms`,
        met:
          m(prod.startMs) < m(npm.startMs) &&
          m(prod.idleRssMiB) < m(npm.idleRssMiB) &&
          m(prod.loadedRssMiB) < m(npm.loadedRssMiB),
        score: m(npm.idleRssMiB) / m(prod.idleRssMiB),
      });
    }
  }
  return goals;
}

const STORES = [
  ['sqlite', 'SQLite'],
  ['postgres', 'PostgreSQL'],
] as const;

/** The rooms release: a subject's room list, authenticated streams, and no slower than before rooms. */
function roomsGoals(
  result: BenchResult,
  sizes: Sizes,
  find: (id: string) => ScenarioResult | undefined,
): Goal[] {
  const goals: Goal[] = [];
  for (const [store, name] of STORES) {
    const figure = `GET /api/users/{subject}/rooms, member of 200 rooms, ${fmt(sizes.large)} stored, 10 connections, ${name}`;
    const goal = 'p99 ≤ 20 ms, 0 errors';
    const s = find(`user-rooms:${store}`);
    if (s === undefined) goals.push(missing(figure, goal));
    else {
      const p99 = s.summary.p99Ms;
      goals.push({
        figure,
        goal,
        measured: `p99 ${p99.toFixed(2)} ms (worst round ${s.summary.worstP99Ms.toFixed(2)}), ${fmt(s.summary.requestsPerSecond)}/s, ${s.ratioToFloor?.toFixed(2) ?? '?'}× floor, ${s.summary.errors} errors`,
        short: `p99 ${p99.toFixed(1)} ms`,
        met: p99 <= 20 && s.summary.errors === 0,
        score: 20 / p99,
      });
    }
  }
  for (const [store, name] of STORES) {
    const figure = `1,000 authenticated streams, 100 rooms (10 private), write to last reader, ${name}`;
    const goal = 'p99 < 100 ms; 0 events to a stream that may not read their room; all delivered';
    const run: StreamsRun | null | undefined = result.streams?.[store];
    if (run == null) goals.push(missing(figure, goal));
    else {
      const p99 = run.all.p99Ms;
      goals.push({
        figure,
        goal,
        measured: `p99 ${p99.toFixed(2)} ms over ${run.writes} writes (public rooms ${run.publicRooms.p99Ms.toFixed(2)}, private ${run.privateRoomsOnly.p99Ms.toFixed(2)}); ${run.leaks} leaked, ${run.undelivered} undelivered, ${run.duplicates} duplicates`,
        short: `p99 ${p99.toFixed(1)} ms, ${run.leaks} leaked`,
        met: p99 < 100 && run.leaks === 0 && run.undelivered === 0 && run.duplicates === 0,
        score: run.leaks > 0 || run.undelivered > 0 ? 0 : 100 / p99,
      });
    }
  }
  for (const [store, name] of STORES) {
    for (const [kind, what] of [
      ['get', 'GET by id'],
      ['create', 'durable POST'],
    ] as const) {
      const figure = `${what}, ${name}, ${fmt(sizes.large)} stored: this commit / baseline ${result.baseline ?? ''}`;
      const goal = '≥ 0.9× the baseline, same rounds';
      const head = find(`baseline:${store}-${kind}-head`);
      const old = find(`baseline:${store}-${kind}-baseline`);
      if (head === undefined || old === undefined) goals.push(missing(figure, goal));
      else {
        const ratio = pairedRatio(head, old);
        goals.push({
          figure,
          goal,
          measured: `${ratio.toFixed(2)}× (${fmt(head.summary.requestsPerSecond)}/s vs ${fmt(old.summary.requestsPerSecond)}/s; CPU ${head.summary.serverCpuUsPerRequest?.toFixed(1) ?? '?'} vs ${old.summary.serverCpuUsPerRequest?.toFixed(1) ?? '?'} µs/req)`,
          short: `${ratio.toFixed(2)}× baseline`,
          met: ratio >= 0.9 && head.summary.errors === 0,
          score: ratio / 0.9,
        });
      }
    }
  }
  return goals;
}
