/**
 * The PostgreSQL floor: what the same client library (node-postgres) does
 * in-process, with no HTTP at all, at concurrency 32 against the same
 * database: 32 loops issuing the service's own queries through one pg.Pool.
 * Prints one JSON line: ops/s, p50/p99 latency (µs), errors.
 *
 * Usage: node --import tsx bench/pg-floor.ts <get|create> <database url with ?schema=> <ids file> <seconds>
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { messageJson } from '../src/domain/message-json.ts';
import { MESSAGE_COLUMNS } from '../src/store/postgres/list-sql.ts';
import { connectionConfig } from '../src/store/postgres/postgres-store.ts';

const CONCURRENCY = 32;
const [mode, url, idsFile, secondsArg] = process.argv.slice(2);
if ((mode !== 'get' && mode !== 'create') || url === undefined || idsFile === undefined) {
  process.stderr.write('usage: pg-floor.ts <get|create> <url> <ids file> <seconds>\n');
  process.exit(2);
}
const seconds = Number(secondsArg ?? '5');
const ids = readFileSync(idsFile, 'utf8').split('\n').filter(Boolean);
const pool = new pg.Pool(connectionConfig(url, CONCURRENCY, 10_000));

async function once(): Promise<void> {
  if (mode === 'get') {
    const id = ids[Math.floor(Math.random() * ids.length)]!;
    await pool.query({
      name: 'get-message',
      text: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1`,
      values: [id],
    });
    return;
  }
  const createdAt = new Date().toISOString();
  const message = {
    id: uuidv7(),
    room: 'general',
    author: 'bench',
    content: 'Hello from the benchmark: a chat message of a typical length.',
    createdAt,
    updatedAt: createdAt,
    version: 1,
    replyTo: null,
  };
  await pool.query({
    name: 'create-message',
    text: `SELECT create_messages($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
      $6::text[], $7::text[], $8::text[], $9::text[])`,
    // A batch of one, as the service sends a create that arrives alone.
    values: [
      [message.id],
      [message.room],
      [message.author],
      [message.content],
      [message.createdAt],
      [messageJson(message)],
      [null],
      [null],
      [null],
    ],
  });
}

async function loop(until: number, latencies: number[], errors: { count: number }) {
  while (performance.now() < until) {
    const start = performance.now();
    try {
      await once();
      latencies.push(performance.now() - start);
    } catch {
      errors.count++;
    }
  }
}

// Warm the connections and prepared statements first, as the service's pool is warm.
await Promise.all(Array.from({ length: CONCURRENCY }, () => once()));
const latencies: number[] = [];
const errors = { count: 0 };
const start = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, () => loop(start + seconds * 1000, latencies, errors)),
);
const elapsed = (performance.now() - start) / 1000;
await pool.end();
latencies.sort((a, b) => a - b);
const at = (p: number) => Math.round(latencies[Math.floor((latencies.length - 1) * p)]! * 1000);
process.stdout.write(
  `${JSON.stringify({
    ops: latencies.length,
    seconds: elapsed,
    opsPerSecond: latencies.length / elapsed,
    errors: errors.count,
    latencyUs: { p50: at(0.5), p99: at(0.99) },
  })}\n`,
);
