/**
 * Reading the whole change log back, to check it against the list: through
 * the real event stream (`GET /api/events?since=0`), or straight from the
 * database where the stream is not there. And SQLite's own integrity check.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { openEventStream } from './event-stream-client.ts';
import type { Change, Message } from './write-ledger.ts';

const CATCH_UP_MS = 30_000;

/** Every change up to `eventSeq` (the list's Event-Seq header), in delivery order. */
export async function changeLogFromStream(base: string, eventSeq: number): Promise<Change[]> {
  if (eventSeq === 0) return [];
  const stream = await openEventStream(base, { query: '?since=0' });
  if (stream.status !== 200) throw new Error(`GET /api/events answered ${stream.status}`);
  try {
    await stream.waitFor((events) => Number(events.at(-1)?.id ?? 0) >= eventSeq, CATCH_UP_MS);
  } finally {
    stream.close();
  }
  return stream.events
    .filter((e) => e.event.startsWith('message.'))
    .map((e) => ({ seq: Number(e.id), kind: e.event, message: JSON.parse(e.data) as Message }));
}

/** The change log as stored (for when the event stream is not available). */
export async function changeLogFromDatabase(databaseUrl: string): Promise<Change[]> {
  let rows: { seq: number | string; kind: string; message: string }[];
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      rows = db.prepare('SELECT seq, kind, message FROM changes ORDER BY seq').all() as typeof rows;
    } finally {
      db.close();
    }
  } else {
    const url = new URL(databaseUrl);
    const schema = url.searchParams.get('schema') ?? 'public';
    url.searchParams.delete('schema');
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      rows = (await client.query(`SELECT seq, kind, message FROM ${schema}.changes ORDER BY seq`))
        .rows;
    } finally {
      await client.end();
    }
  }
  return rows.map((r) => ({
    seq: Number(r.seq),
    kind: r.kind,
    message: JSON.parse(r.message) as Message,
  }));
}

/** Whether this service instance serves the event stream (it is being built alongside). */
export async function hasEventStream(base: string): Promise<boolean> {
  const response = await fetch(`${base}/api/events?since=0`, {
    signal: AbortSignal.timeout(10_000),
  });
  await response.body?.cancel();
  return response.status === 200;
}

/** The log reader the checks use: the real stream when the service has it. */
export async function changeLogReader(
  base: string,
  databaseUrl: string,
): Promise<(base: string, eventSeq: number) => Promise<Change[]>> {
  if (await hasEventStream(base)) return changeLogFromStream;
  return () => changeLogFromDatabase(databaseUrl);
}

/** `PRAGMA integrity_check` on a SQLite file (read-only, so the running service is undisturbed). */
export function sqliteIntegrity(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}
