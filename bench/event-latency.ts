/**
 * Write-to-subscriber latency of the event stream, on the production build
 * (`npm run build`, then `node dist/server.js` processes):
 *
 * (a) cross-instance: two instances on one PostgreSQL schema, separate
 *     processes; a write through instance 1, one subscriber on instance 2;
 * (b) fan-out: one instance on SQLite with 1,000 open streams; a write, until
 *     the last of the 1,000 streams has the event.
 *
 * Each latency runs from the moment the POST is sent to the moment the event
 * is parsed by the subscriber (the same clock: the subscribers live in this
 * process). Writes are sequential: each one waits for its delivery, then a
 * short pause, so the figure is latency, not queueing under overload.
 *
 * Run: node --import tsx bench/event-latency.ts   (BENCH_QUICK=1: fewer writes;
 * BENCH_SKIP_BUILD=1: use the existing dist/; BENCH_ONLY=cross|fanout: one of the two). Prints one JSON line to stdout
 * and writes bench/results/event-latency-<commit>.json.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { machineInfo } from './machine-info.ts';
import { freePort, SERVICE_SETTINGS, startServer, type ServerProcess } from './server-process.ts';
import { markedStream, postMessage } from './sse-markers.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const QUICK = process.env.BENCH_QUICK === '1';
const PG_URL =
  process.env.BENCH_PG_URL ?? process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CROSS_WRITES = QUICK ? 100 : 500;
const FAN_STREAMS = 1000;
const FAN_WRITES = QUICK ? 50 : 200;
const WARMUP = 20;
const PAUSE_MS = 5;
const DELIVERY_TIMEOUT_MS = 10_000;
const GOAL_P99_MS = 100;

const SERVICE_ENV = {
  ...SERVICE_SETTINGS,
  // Every stream of the 1,000 comes from this one address: the per-client cap must not refuse them.
  EVENTS_MAX_STREAMS_PER_CLIENT: '100000',
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function log(text: string): void {
  process.stderr.write(`[event-latency] ${text}\n`);
}

/** A subscriber that reports when each marked write (`lat-<n>`) arrives. */
interface Subscriber {
  close(): void;
}

const MARK = Buffer.from('"content":"lat-');

/**
 * A raw socket reading the stream (markedStream): with many streams in one
 * process, the client's own parsing would otherwise dominate what is measured.
 * Every marked message is written once, so each marker is one `message.created` event.
 */
async function subscribe(
  url: string,
  onArrival: (n: number, at: number) => void,
): Promise<Subscriber> {
  const socket = await markedStream(url, {}, MARK, onArrival);
  return { close: () => socket.destroy() };
}

function post(baseUrl: string, n: number): Promise<void> {
  return postMessage(baseUrl, agent, { author: 'bench', room: 'latency', content: `lat-${n}` });
}

interface Figures {
  readonly writes: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

function figures(samples: number[]): Figures {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    writes: sorted.length,
    p50Ms: round(rank(0.5)),
    p99Ms: round(rank(0.99)),
    maxMs: round(sorted[sorted.length - 1]!),
    meanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
}

interface Delivery {
  /** The first subscriber had it. */
  readonly first: number;
  /** The last subscriber had it. */
  readonly last: number;
}

interface Samples {
  /** POST sent -> the last subscriber has the event: the figure. */
  readonly total: number[];
  /** POST sent -> 201 received (the write itself, durable). */
  readonly write: number[];
  /** POST sent -> the first subscriber has the event. */
  readonly first: number[];
  /** The first subscriber has it -> the last one has it (the fan-out itself). */
  readonly spread: number[];
}

/**
 * Writes `count` marked messages one after the other through `writeTo`,
 * each waiting for its delivery to every subscriber.
 */
async function measure(
  writeTo: string,
  count: number,
  firstMark: number,
  delivered: (n: number) => Promise<Delivery>,
): Promise<Samples> {
  const samples: Samples = { total: [], write: [], first: [], spread: [] };
  for (let i = 0; i < count; i++) {
    const n = firstMark + i;
    const arrival = delivered(n);
    const sent = performance.now();
    await post(writeTo, n);
    const answered = performance.now();
    const at = await arrival;
    samples.total.push(at.last - sent);
    samples.write.push(answered - sent);
    samples.first.push(at.first - sent);
    samples.spread.push(at.last - at.first);
    await sleep(PAUSE_MS);
  }
  return samples;
}

/** Resolves when the n-th write reached all `expected` subscribers. */
function deliveryTracker(expected: number) {
  const waiting = new Map<
    number,
    { left: number; first: number; resolve: (d: Delivery) => void }
  >();
  return {
    arrived(n: number, at: number) {
      const entry = waiting.get(n);
      if (entry === undefined) return;
      if (entry.left === expected) entry.first = at;
      entry.left--;
      if (entry.left === 0) {
        waiting.delete(n);
        entry.resolve({ first: entry.first, last: at });
      }
    },
    delivered(n: number): Promise<Delivery> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(n);
          reject(new Error(`write ${n} not delivered within ${DELIVERY_TIMEOUT_MS} ms`));
        }, DELIVERY_TIMEOUT_MS);
        waiting.set(n, {
          left: expected,
          first: 0,
          resolve: (d) => {
            clearTimeout(timer);
            resolve(d);
          },
        });
      });
    },
  };
}

/** The figure, with where its time went (medians of the parts). */
function report(samples: Samples): Figures & Record<string, number> {
  return {
    ...figures(samples.total),
    writeP50Ms: figures(samples.write).p50Ms,
    writeP99Ms: figures(samples.write).p99Ms,
    firstSubscriberP50Ms: figures(samples.first).p50Ms,
    firstSubscriberP99Ms: figures(samples.first).p99Ms,
    firstToLastP50Ms: figures(samples.spread).p50Ms,
    firstToLastP99Ms: figures(samples.spread).p99Ms,
  };
}

async function start(name: string, databaseUrl: string): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    name,
    command: [process.execPath, 'dist/server.js'],
    env: { ...SERVICE_ENV, PORT: String(port), DATABASE_URL: databaseUrl },
    port,
    readyPath: '/readyz',
    cwd: ROOT,
  });
}

async function crossInstance(): Promise<Record<string, unknown>> {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    return { skipped: `PostgreSQL at ${PG_URL} unavailable: ${(error as Error).message}` };
  }
  const schema = `bench_events_${randomBytes(5).toString('hex')}`;
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  const servers: ServerProcess[] = [];
  let subscriber: Subscriber | undefined;
  try {
    servers.push(await start('writer instance', url.toString()));
    servers.push(await start('subscriber instance', url.toString()));
    const [writer, reader] = servers as [ServerProcess, ServerProcess];
    const tracker = deliveryTracker(1);
    subscriber = await subscribe(`${reader.baseUrl}/api/events`, tracker.arrived);
    log(`cross-instance: ${WARMUP} warm-up writes, then ${CROSS_WRITES}`);
    await measure(writer.baseUrl, WARMUP, 0, tracker.delivered);
    const samples = await measure(writer.baseUrl, CROSS_WRITES, WARMUP, tracker.delivered);
    return {
      engine: 'postgres',
      instances: 2,
      processes: 'separate (node dist/server.js each)',
      from: 'POST sent to instance 1',
      to: 'event parsed by the subscriber on instance 2',
      ...report(samples),
    };
  } finally {
    subscriber?.close();
    for (const server of servers) await server.stop();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

async function fanOut(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-events-'));
  let server: ServerProcess | undefined;
  const subscribers: Subscriber[] = [];
  try {
    server = await start('fan-out instance', `sqlite:${join(dir, 'events.db')}`);
    const tracker = deliveryTracker(FAN_STREAMS);
    // Opened in small groups, so the listen backlog never overflows.
    for (let i = 0; i < FAN_STREAMS; i += 50) {
      const group = Array.from({ length: Math.min(50, FAN_STREAMS - i) }, () =>
        subscribe(`${server!.baseUrl}/api/events?room=latency`, tracker.arrived),
      );
      subscribers.push(...(await Promise.all(group)));
    }
    log(
      `fan-out: ${subscribers.length} streams open; ${WARMUP} warm-up writes, then ${FAN_WRITES}`,
    );
    await measure(server.baseUrl, WARMUP, 0, tracker.delivered);
    const samples = await measure(server.baseUrl, FAN_WRITES, WARMUP, tracker.delivered);
    return {
      engine: 'sqlite',
      streams: subscribers.length,
      processes:
        'one server process (node dist/server.js); the 1,000 subscribers in the bench process',
      from: 'POST sent',
      to: 'event parsed by the last of the 1,000 streams',
      ...report(samples),
    };
  } finally {
    for (const s of subscribers) s.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const machine = machineInfo(ROOT);
  if (process.env.BENCH_SKIP_BUILD !== '1') {
    log('npm run build');
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const startedAt = new Date().toISOString();
  const only = process.env.BENCH_ONLY;
  const cross = only === 'fanout' ? { skipped: 'BENCH_ONLY=fanout' } : await crossInstance();
  log(`cross-instance: ${JSON.stringify(cross)}`);
  const fan = only === 'cross' ? { skipped: 'BENCH_ONLY=cross' } : await fanOut();
  log(`fan-out: ${JSON.stringify(fan)}`);
  const p99s = [cross.p99Ms, fan.p99Ms].filter((x): x is number => typeof x === 'number');
  const result = {
    kind: 'event-latency',
    startedAt,
    mode: QUICK ? 'quick' : 'full',
    machine,
    // Other work on the machine moves these figures: the load when the run ended.
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    settings: { ...SERVICE_ENV, pauseBetweenWritesMs: PAUSE_MS, warmupWrites: WARMUP },
    crossInstance: cross,
    fanOut: fan,
    goalP99Ms: GOAL_P99_MS,
    meetsGoal: p99s.length === 2 && p99s.every((p) => p < GOAL_P99_MS),
  };
  const file = join(ROOT, 'bench', 'results', `event-latency-${machine.commit}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${file}`);
  agent.destroy();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
