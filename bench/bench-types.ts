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
  /** CPU time of the PostgreSQL backends serving this server, per request (µs). */
  readonly databaseCpuUsPerRequest?: number | null;
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
    readonly databaseCpuUsPerRequest?: number | null;
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

export interface StartResult {
  readonly mode: string;
  readonly command: string;
  readonly processes: readonly string[];
  /** Each run's time from spawn to /readyz 200. */
  readonly startMs: readonly number[];
  readonly idleRssMiB: readonly number[];
  /** Peak RSS of the whole tree under a GET-by-id load. */
  readonly loadedRssMiB: readonly number[];
}

/** Latency figures of one kind of write in the `streams` group (bench/room-streams.ts). */
export interface StreamFigures {
  readonly writes: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** One store's `streams` run: what bench/room-streams.ts printed. */
export interface StreamsRun {
  readonly streams: number;
  readonly rooms: number;
  readonly privateRooms: number;
  readonly writes: number;
  /** Writes some reader did not get within the delivery timeout. */
  readonly undelivered: number;
  /** POST answered -> the last stream that may read the room has the event. */
  readonly all: StreamFigures;
  readonly publicRooms: StreamFigures;
  readonly privateRoomsOnly: StreamFigures;
  readonly fromPostSent: StreamFigures;
  readonly write: StreamFigures;
  /** Events delivered to a stream whose subject may not read their room. */
  readonly leaks: number;
  readonly duplicates: number;
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
  /** The same on PostgreSQL. */
  readonly postgresList?: {
    readonly stored: number;
    readonly runs: readonly ListRun[];
  } | null;
  /** How each way of starting the service starts and how much memory it holds. */
  readonly start?: readonly StartResult[] | null;
  /** The commit measured as "before" (pg-create), if any. */
  readonly baseline?: string | null;
  readonly events: unknown;
  /** 1,000 authenticated streams over rooms with private ones, by store (`streams`). */
  readonly streams?: {
    readonly sqlite: StreamsRun | null;
    readonly postgres: StreamsRun | null;
  } | null;
  readonly goals: readonly Goal[];
  readonly notes: readonly string[];
}
