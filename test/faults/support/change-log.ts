/**
 * Reading the whole change log back through the real event stream
 * (`GET /api/events?since=0`), to check it against the list; and SQLite's own
 * integrity check.
 */
import Database from 'better-sqlite3';
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
