/**
 * What every group of `npm run bench` measures with: a member (one server and
 * one wrk run shape) and the interleaved rounds that turn members into
 * scenarios, each figure a median over the rounds and each ratio to the floor
 * a median of per-round ratios.
 */
import type { Sample, ScenarioResult } from './bench-types.ts';
import { sampleRss, type Cores, type ServerProcess } from './server-process.ts';
import { errorCount, requestsPerSecond, runWrk, type WrkRun } from './wrk-runner.ts';

const MiB = 2 ** 20;

/** How long and how often: the run's plan. */
export interface RoundPlan {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
  readonly connections: number;
}

/** Where wrk and the rounds run, and where they report. */
export interface RoundContext {
  readonly cores: Cores;
  readonly dirs: { readonly lua: string; readonly tmp: string };
  readonly plan: RoundPlan;
  log(line: string): void;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Member {
  readonly id: string;
  readonly label: string;
  readonly store: ScenarioResult['store'];
  readonly stored: number | null;
  readonly settings: Record<string, string>;
  /** wrk connections; plan.connections when not given. */
  readonly connections?: number;
  measure(seconds: number): Promise<Omit<Sample, 'round'>>;
}

export function wrkMember(
  ctx: RoundContext,
  server: ServerProcess,
  meta: Omit<Member, 'measure'>,
  run: Omit<WrkRun, 'seconds' | 'connections' | 'url'> & { path: string },
  /** CPU seconds of the database backends serving `server` so far (PostgreSQL). */
  databaseCpu?: () => Promise<number>,
): Member {
  return {
    ...meta,
    measure: async (seconds) => {
      const rss = sampleRss(server.pid);
      const cpuBefore = server.cpuSeconds();
      const dbBefore = await databaseCpu?.();
      const result = await runWrk(
        ctx.cores,
        {
          ...run,
          url: server.baseUrl + run.path,
          seconds,
          connections: meta.connections ?? ctx.plan.connections,
        },
        ctx.dirs,
      );
      const { peak } = rss.stop();
      const cpu = server.cpuSeconds() - cpuBefore;
      const db = dbBefore === undefined ? undefined : (await databaseCpu!()) - dbBefore;
      return {
        databaseCpuUsPerRequest: db === undefined ? null : (db * 1e6) / result.requests,
        requestsPerSecond: requestsPerSecond(result),
        p50Ms: result.latencyUs.p50 / 1000,
        p99Ms: result.latencyUs.p99 / 1000,
        errors: errorCount(result),
        serverRssMiB: Number.isNaN(peak) ? null : peak / MiB,
        serverCpuUsPerRequest: Number.isNaN(cpu) ? null : (cpu * 1e6) / result.requests,
      };
    },
  };
}

/**
 * Warms every member, then measures them in `plan.rounds` interleaved rounds
 * (the order reversed every other round), so a ratio between two members of
 * one round compares figures taken a few seconds apart on the same core.
 */
export async function pairedRounds(
  ctx: RoundContext,
  group: string,
  members: readonly Member[],
  floorId: string | null,
): Promise<ScenarioResult[]> {
  for (const m of members) await m.measure(ctx.plan.warmupSeconds);
  const samples = new Map<string, Sample[]>(members.map((m) => [m.id, []]));
  for (let round = 0; round < ctx.plan.rounds; round++) {
    const order = round % 2 === 0 ? members : [...members].reverse();
    for (const m of order) {
      const sample = { round, ...(await m.measure(ctx.plan.seconds)) };
      samples.get(m.id)!.push(sample);
      ctx.log(
        `  [${group}] round ${round + 1}/${ctx.plan.rounds} ${m.id}: ${Math.round(sample.requestsPerSecond).toLocaleString('en')}/s` +
          ` p50 ${sample.p50Ms.toFixed(2)} ms p99 ${sample.p99Ms.toFixed(2)} ms errors ${sample.errors}` +
          (sample.serverCpuUsPerRequest === null
            ? ''
            : ` cpu ${sample.serverCpuUsPerRequest.toFixed(1)} µs/req`) +
          (sample.databaseCpuUsPerRequest == null
            ? ''
            : ` db cpu ${sample.databaseCpuUsPerRequest.toFixed(1)} µs/req`),
      );
    }
  }
  const floor = floorId === null ? undefined : samples.get(floorId);
  return members.map((m) => {
    const own = samples.get(m.id)!;
    const rss = own.map((s) => s.serverRssMiB).filter((v): v is number => v !== null);
    const cpu = own.map((s) => s.serverCpuUsPerRequest).filter((v): v is number => v !== null);
    const dbCpu = own
      .map((s) => s.databaseCpuUsPerRequest)
      .filter((v): v is number => v !== null && v !== undefined);
    return {
      id: m.id,
      group,
      label: m.label,
      store: m.store,
      stored: m.stored,
      connections: m.connections ?? ctx.plan.connections,
      settings: m.settings,
      samples: own,
      summary: {
        requestsPerSecond: median(own.map((s) => s.requestsPerSecond)),
        p50Ms: median(own.map((s) => s.p50Ms)),
        p99Ms: median(own.map((s) => s.p99Ms)),
        worstP99Ms: Math.max(...own.map((s) => s.p99Ms)),
        errors: own.reduce((sum, s) => sum + s.errors, 0),
        serverRssMiB: rss.length === 0 ? null : Math.max(...rss),
        serverCpuUsPerRequest: cpu.length === 0 ? null : median(cpu),
        databaseCpuUsPerRequest: dbCpu.length === 0 ? null : median(dbCpu),
      },
      ratioToFloor:
        floor === undefined || m.id === floorId
          ? null
          : median(own.map((s, i) => s.requestsPerSecond / floor[i]!.requestsPerSecond)),
    };
  });
}
