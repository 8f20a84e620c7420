/** The shape of a benchmark result file (bench/results/<time>-<commit>.json). */
import type { MachineInfo } from './machine-info.ts';

/** One measurement of one scenario in one round. */
export interface Sample {
  readonly round: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** Peak resident memory of the server process during the measurement, MiB. */
  readonly serverRssMiB: number | null;
  /**
   * CPU time the server process used per request (user + system, µs). Unlike
   * req/s it hardly changes when other processes compete for the core.
   */
  readonly serverCpuUsPerRequest: number | null;
}

export interface ScenarioResult {
  readonly id: string;
  readonly group: string;
  readonly label: string;
  readonly store: 'sqlite' | 'postgres' | 'none';
  /** Messages stored when the scenario started. */
  readonly stored: number | null;
  readonly connections: number;
  readonly settings: Readonly<Record<string, string>>;
  readonly samples: readonly Sample[];
  /** Medians over the rounds (p99: also the worst round). */
  readonly summary: {
    readonly requestsPerSecond: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly worstP99Ms: number;
    readonly errors: number;
    readonly serverRssMiB: number | null;
    readonly serverCpuUsPerRequest: number | null;
  };
  /** Median over rounds of this scenario's req/s divided by the floor's in the same round. */
  readonly ratioToFloor: number | null;
}

export interface ListRun {
  readonly messages: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly messagesPerSecond: number;
  readonly complete: boolean;
  readonly rssBeforeMiB: number;
  readonly rssPeakMiB: number;
  readonly rssGrowthMiB: number;
}

export interface Goal {
  readonly figure: string;
  readonly goal: string;
  readonly measured: string;
  /** The measured figure in a few words, for the chart. */
  readonly short: string;
  /** null when the figure could not be measured in this run. */
  readonly met: boolean | null;
  /** For the chart: measured / required, so 1 is the goal line (higher is better). */
  readonly score: number | null;
}

export interface BenchResult {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly mode: 'full' | 'quick';
  readonly machine: MachineInfo & {
    readonly pinned: boolean;
    readonly serverCore: string;
    readonly clientCore: string;
    readonly wrk: string;
    readonly sqlite: string;
    readonly postgres: string | null;
    /** 1, 5 and 15 minute load averages: how busy the machine was around the run. */
    readonly loadAverageAtStart: readonly number[];
    readonly loadAverageAtEnd: readonly number[];
  };
  readonly plan: Readonly<Record<string, number>>;
  readonly settings: Readonly<Record<string, string>>;
  readonly scenarios: readonly ScenarioResult[];
  readonly list: {
    readonly stored: number;
    readonly runs: readonly ListRun[];
  } | null;
  readonly events: unknown;
  readonly goals: readonly Goal[];
  readonly notes: readonly string[];
}
