/**
 * How much of node-postgres' query results survives V8's young collections,
 * with node-postgres alone (no service): 4,000 queries of a 30 KB text through
 * a pool, one at a time, each way in a fresh process run with
 * `--trace-gc-nvp`, summing `new_space_survived` and counting full
 * collections. The ways: the pool's `query_timeout` set (as PostgresStore
 * sets it), unset, and set with the rows taken out of each result (as
 * PostgresStore's #query does). What a result that survives costs: each one
 * reaches the old generation and stays until a full collection.
 *
 * Usage: node --import tsx bench/pg-result-retention.ts   (BENCH_PG_URL or TEST_PG_URL, else the local test database)
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const QUERIES = 4000;
const TEXT_BYTES = 30_000;
const WAYS = ['timeout', 'no-timeout', 'timeout, rows taken out'] as const;
type Way = (typeof WAYS)[number];

const url =
  process.env.BENCH_PG_URL ?? process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The child: the queries, one way. */
async function run(way: Way): Promise<void> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    ...(way === 'no-timeout' ? {} : { query_timeout: 5000 }),
  });
  let bytes = 0;
  for (let i = 0; i < QUERIES; i++) {
    const result = await pool.query<{ t: string }>({
      name: 'text',
      text: 'SELECT repeat($1::text, $2::integer) AS t',
      values: ['a', TEXT_BYTES],
    });
    const rows = result.rows;
    if (way === 'timeout, rows taken out') result.rows = [];
    bytes += rows[0]!.t.length;
  }
  await pool.end();
  if (bytes !== QUERIES * TEXT_BYTES) throw new Error(`read ${bytes} bytes`);
}

/** One way in a fresh process: MB allocated as texts, MB survived, full collections. */
function measure(way: Way) {
  const trace = execFileSync(
    process.execPath,
    ['--trace-gc-nvp', '--import', 'tsx', fileURLToPath(import.meta.url), way],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const lines = trace.split('\n');
  const survived = lines
    .filter((l) => / gc=s /.test(l))
    .reduce((sum, l) => sum + Number(/new_space_survived=(\d+)/.exec(l)?.[1] ?? 0), 0);
  return {
    way,
    textsMB: (QUERIES * TEXT_BYTES) / 1e6,
    survivedMB: Number((survived / 1e6).toFixed(1)),
    fullCollections: lines.filter((l) => / gc=mc /.test(l)).length,
  };
}

const child = process.argv[2] as Way | undefined;
if (child !== undefined) {
  if (!WAYS.includes(child)) throw new Error(`unknown way ${child}`);
  await run(child);
} else {
  for (const way of WAYS) process.stdout.write(`${JSON.stringify(measure(way))}\n`);
}
