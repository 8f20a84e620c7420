/**
 * The client side of the `streams` group: 1,000 SSE streams (GET /api/events,
 * each with its own subject's token) on a service with auth on, and a writer
 * that posts to random rooms of the layout in seed-rooms.ts, one write at a
 * time. For each write: from the POST's answer to the moment the last stream
 * that may read the room has the event (the figure), and every arrival at a
 * stream that may not read the room (a leak; must be none).
 *
 * Run by run-bench.ts: node --import tsx bench/room-streams.ts <baseUrl> <secret> <writes>
 * Prints one JSON line.
 */
import http from 'node:http';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT } from 'jose';
import { STREAM_ROOMS, STREAM_SUBJECTS, STREAM_WRITER, streamMembers } from './seed-rooms.ts';
import { markedStream, postMessage } from './sse-markers.ts';

const [baseUrl, secret, writesArg] = process.argv.slice(2);
const WRITES = Number(writesArg);
const WARMUP = 20;
const PAUSE_MS = 5;
const DELIVERY_TIMEOUT_MS = 10_000;
/** After the last write, how long leaks may still arrive before the count is final. */
const SETTLE_MS = 1000;
/** The whole run stops here whatever happened (a bounded run). */
const RUN_DEADLINE_MS = 5 * 60_000;
const MARK = Buffer.from('"content":"lat-');

function log(text: string): void {
  process.stderr.write(`[streams] ${text}\n`);
}

async function mint(subject: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: subject, iat: now, exp: now + 3600 })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secret));
}

function subscribe(token: string, onArrival: (n: number, at: number) => void) {
  return markedStream(
    `${baseUrl!}/api/events`,
    { Authorization: `Bearer ${token}` },
    MARK,
    onArrival,
  );
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(token: string, room: string, n: number): Promise<void> {
  // The author equals the token's subject (allowed with auth on), so the same writes also run with
  // auth off, where no stream is refused anything: how the leak count was checked to catch leaks.
  return postMessage(
    baseUrl!,
    agent,
    { author: STREAM_WRITER, room, content: `lat-${n}` },
    { authorization: `Bearer ${token}` },
  );
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function figures(values: readonly number[]) {
  return {
    writes: values.length,
    p50Ms: round2(percentile(values, 0.5)),
    p99Ms: round2(percentile(values, 0.99)),
    maxMs: round2(percentile(values, 1)),
  };
}

interface Pending {
  readonly room: string;
  readonly readers: ReadonlySet<string>;
  left: number;
  last: number;
  done?: () => void;
}

async function main(): Promise<void> {
  const deadline = performance.now() + RUN_DEADLINE_MS;
  const members = new Map(STREAM_ROOMS.map((room) => [room, streamMembers(room)]));
  const pending = new Map<number, Pending>();
  const leaks: Array<{ write: number; room: string; subject: string }> = [];
  let leakCount = 0;
  let duplicates = 0;
  const seen = new Map<number, Set<string>>();
  const arrived = (subject: string) => (n: number, at: number) => {
    const entry = pending.get(n);
    if (entry === undefined) return;
    if (!entry.readers.has(subject)) {
      leakCount++;
      if (leaks.length < 20) leaks.push({ write: n, room: entry.room, subject });
      return;
    }
    const got = seen.get(n)!;
    if (got.has(subject)) {
      duplicates++;
      return;
    }
    got.add(subject);
    entry.left--;
    entry.last = at;
    if (entry.left === 0) entry.done?.();
  };

  const tokens = await Promise.all(STREAM_SUBJECTS.map(mint));
  const writerToken = await mint(STREAM_WRITER);
  const sockets: net.Socket[] = [];
  // Opened in small groups, so the listen backlog never overflows.
  for (let i = 0; i < STREAM_SUBJECTS.length; i += 50) {
    const group = STREAM_SUBJECTS.slice(i, i + 50).map((subject, j) =>
      subscribe(tokens[i + j]!, arrived(subject)),
    );
    sockets.push(...(await Promise.all(group)));
  }
  log(`${sockets.length} streams open; ${WARMUP} warm-up writes, then ${WRITES}`);

  // The same pseudo-random rooms every run.
  let state = 424242;
  const nextRoom = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return STREAM_ROOMS[state % STREAM_ROOMS.length]!;
  };
  const samples: Array<{
    room: string;
    afterAnswerMs: number;
    afterSendMs: number;
    writeMs: number;
  }> = [];
  let undelivered = 0;
  let n = 0;
  for (; n < WARMUP + WRITES && performance.now() < deadline; n++) {
    const room = nextRoom();
    const readers = members.get(room)!;
    const entry: Pending = { room, readers, left: readers.size, last: 0 };
    seen.set(n, new Set());
    pending.set(n, entry);
    const all = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), DELIVERY_TIMEOUT_MS);
      entry.done = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    const sent = performance.now();
    await post(writerToken, room, n);
    const answered = performance.now();
    const delivered = await all;
    if (n >= WARMUP) {
      if (!delivered) undelivered++;
      else {
        samples.push({
          room,
          // The event may reach every reader before the answer reaches the writer.
          afterAnswerMs: Math.max(0, entry.last - answered),
          afterSendMs: entry.last - sent,
          writeMs: answered - sent,
        });
      }
    }
    await sleep(PAUSE_MS);
  }
  // Leaks of the last writes may still be on their way.
  await sleep(SETTLE_MS);
  for (const s of sockets) s.destroy();
  agent.destroy();

  const pick = (f: (s: (typeof samples)[number]) => boolean) =>
    samples.filter(f).map((s) => s.afterAnswerMs);
  process.stdout.write(
    `${JSON.stringify({
      streams: sockets.length,
      rooms: STREAM_ROOMS.length,
      privateRooms: STREAM_ROOMS.filter((r) => r.startsWith('priv-')).length,
      writes: n - WARMUP,
      warmupWrites: WARMUP,
      pauseMs: PAUSE_MS,
      undelivered,
      from: 'POST answered (201 read by the writer)',
      to: 'the last stream that may read the room has the event',
      all: figures(samples.map((s) => s.afterAnswerMs)),
      publicRooms: figures(pick((s) => !s.room.startsWith('priv-'))),
      privateRoomsOnly: figures(pick((s) => s.room.startsWith('priv-'))),
      fromPostSent: figures(samples.map((s) => s.afterSendMs)),
      write: figures(samples.map((s) => s.writeMs)),
      leaks: leakCount,
      leakExamples: leaks,
      duplicates,
    })}\n`,
  );
}

await main();
