/**
 * Reactions for the `conversations` group, seeded without HTTP into stores
 * that already hold their messages (seed-data.ts), as the stores write them:
 * on SQLite `position` is the reaction's place within its message (max + 1,
 * so 1..n in the order made), on PostgreSQL it comes from the table's
 * sequence (given here in the order made, and the sequence set past them).
 *
 * The spread is Zipf-ish and the same on both stores (a seeded generator
 * over the messages in id order): most messages have none; a reacted
 * message's reactor count has a Pareto tail (most 1-5, a few hundred at
 * most 1,000); its emoji are a handful drawn by popularity (most 1-5, never
 * more than the store's 20), among them multi-code-point ones (skin tones,
 * ZWJ sequences, flags, keycaps) and names such as `:party:`.
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import { MAX_EMOJI_PER_MESSAGE } from '../src/domain/reaction.ts';
import { schemaClient, settleTables } from './seed-data.ts';
import { random } from './chat-text.ts';

/** By popularity, most popular first (the draw is ∝ 1/rank). */
export const EMOJI = [
  '👍',
  '❤️',
  '😂',
  '🎉',
  '👀',
  '🙏',
  '🔥',
  '👍🏽',
  '✅',
  '🚀',
  '😮',
  '💯',
  ':party:',
  '👏',
  '🙌',
  '🤔',
  '😢',
  '🏳️‍🌈',
  '❤️‍🔥',
  ':shipit:',
  '👨‍👩‍👧',
  '🇫🇷',
  '1️⃣',
  '🫡',
  '🤦‍♀️',
  '👋🏿',
  '😅',
  '🙏🏼',
  ':+1:',
  '🥲',
] as const;

/** Reactors are drawn from this many users (authors are user-0..99; readers are more). */
const REACTOR_POOL = 2000;
const MAX_REACTORS = 1000;
/** Pareto exponents: reactors per reacted message, emoji per reacted message. */
const REACTOR_TAIL = 1.2;
const EMOJI_TAIL = 1.3;

/** floor(u^(-1/a)) for u in (0, 1]: 1 most of the time, a long tail. */
function pareto(next: () => number, tail: number, cap: number): number {
  return Math.min(cap, Math.floor((1 - next()) ** (-1 / tail)));
}

/**
 * Reactions per message index: exactly `total` over `messages` (a random
 * top-up or trim after a first draw, so both stores hold the same count).
 */
export function reactionCounts(messages: number, total: number): Uint16Array {
  const counts = new Uint16Array(messages);
  if (messages === 0 || total === 0) return counts;
  const estimate = random(7);
  let sum = 0;
  for (let i = 0; i < 100_000; i++) sum += pareto(estimate, REACTOR_TAIL, MAX_REACTORS);
  const reactedShare = Math.min(1, total / messages / (sum / 100_000));
  const next = random(11);
  let placed = 0;
  for (let i = 0; i < messages; i++) {
    if (next() >= reactedShare) continue;
    counts[i] = pareto(next, REACTOR_TAIL, MAX_REACTORS);
    placed += counts[i]!;
  }
  while (placed > total) {
    const i = Math.floor(next() * messages);
    if (counts[i]! > 0) {
      counts[i]!--;
      placed--;
    }
  }
  while (placed < total) {
    const i = Math.floor(next() * messages);
    if (counts[i]! < MAX_REACTORS) {
      counts[i]!++;
      placed++;
    }
  }
  return counts;
}

export interface ReactionRow {
  readonly messageId: string;
  readonly emoji: string;
  readonly subject: string;
  readonly room: string;
  readonly createdAt: string;
  /** 1..n within the message, in the order made. */
  readonly place: number;
}

/** Weights ∝ 1/rank over `n` ranks, as a cumulative table. */
function zipfTable(n: number): number[] {
  const out: number[] = [];
  let sum = 0;
  for (let r = 1; r <= n; r++) out.push((sum += 1 / r));
  return out.map((c) => c / sum);
}
const ZIPF = Array.from({ length: EMOJI.length + 1 }, (_, n) => zipfTable(n));
const pick = (table: readonly number[], u: number) => {
  const i = table.findIndex((c) => u < c);
  return i < 0 ? table.length - 1 : i;
};

/** The `count` reactions of message number `index` (the same on every run and store). */
export function reactionsOf(
  index: number,
  count: number,
  message: { id: string; room: string; createdMs: number },
): ReactionRow[] {
  const next = random(Math.imul(index + 1, 2654435761));
  const kinds = Math.min(MAX_EMOJI_PER_MESSAGE, count, pareto(next, EMOJI_TAIL, EMOJI.length));
  const palette: string[] = [];
  while (palette.length < kinds) {
    const emoji = EMOJI[pick(ZIPF[EMOJI.length]!, next())]!;
    if (!palette.includes(emoji)) palette.push(emoji);
  }
  const reactors = palette.map(() => new Set<string>());
  const rows: ReactionRow[] = [];
  let at = message.createdMs;
  for (let place = 1; place <= count; place++) {
    // Each emoji of the palette once first (so none is left unused), then by popularity.
    const k = place <= kinds ? place - 1 : pick(ZIPF[kinds]!, next());
    let subject: string;
    do subject = `user-${Math.floor(next() * REACTOR_POOL)}`;
    while (reactors[k]!.has(subject));
    reactors[k]!.add(subject);
    at += 1 + Math.floor(next() * 60_000);
    rows.push({
      messageId: message.id,
      emoji: palette[k]!,
      subject,
      room: message.room,
      createdAt: new Date(at).toISOString(),
      place,
    });
  }
  return rows;
}

/** What was seeded, for the run's notes. */
export interface ReactionSpread {
  readonly reactions: number;
  readonly reactedMessages: number;
  /** Reacted messages by reactor count: 1, 2-5, 6-50, 51+. */
  readonly byReactors: readonly [number, number, number, number];
  readonly maxReactors: number;
  readonly seconds: number;
}

function spreadOf(counts: Uint16Array, seconds: number): ReactionSpread {
  const by: [number, number, number, number] = [0, 0, 0, 0];
  let reactions = 0;
  let max = 0;
  for (const n of counts) {
    if (n === 0) continue;
    reactions += n;
    max = Math.max(max, n);
    by[n === 1 ? 0 : n <= 5 ? 1 : n <= 50 ? 2 : 3]++;
  }
  return {
    reactions,
    reactedMessages: by.reduce((a, b) => a + b, 0),
    byReactors: by,
    maxReactors: max,
    seconds,
  };
}

/** Adds `total` reactions to a seeded SQLite file's messages. */
export function seedSqliteReactions(file: string, total: number): ReactionSpread {
  const started = performance.now();
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    const messages = db.prepare('SELECT count(*) FROM messages').pluck().get() as number;
    const counts = reactionCounts(messages, total);
    const insert = db.prepare(
      `INSERT INTO reactions (message_id, emoji, subject, room, created_at, position)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    const flush = db.transaction((rows: ReactionRow[]) => {
      for (const r of rows)
        insert.run(r.messageId, r.emoji, r.subject, r.room, r.createdAt, r.place);
    });
    const read = db
      .prepare('SELECT id, room, created_at FROM messages ORDER BY id')
      .raw()
      .iterate() as IterableIterator<[string, string, string]>;
    let chunk: ReactionRow[] = [];
    let index = 0;
    // Read first, written after: better-sqlite3 cannot write while a statement iterates.
    const pending: ReactionRow[][] = [];
    for (const [id, room, createdAt] of read) {
      const n = counts[index]!;
      if (n > 0)
        chunk.push(...reactionsOf(index, n, { id, room, createdMs: Date.parse(createdAt) }));
      index++;
      if (chunk.length >= 50_000) {
        pending.push(chunk);
        chunk = [];
      }
    }
    pending.push(chunk);
    for (const rows of pending) flush(rows);
    db.pragma('wal_checkpoint(TRUNCATE)');
    return spreadOf(counts, (performance.now() - started) / 1000);
  } finally {
    db.close();
  }
}

async function insertPostgresReactions(
  client: pg.ClientBase,
  rows: readonly ReactionRow[],
  firstPosition: number,
): Promise<void> {
  await client.query(
    `INSERT INTO reactions (message_id, emoji, subject, room, created_at, position)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
       $6::bigint[])`,
    [
      rows.map((r) => r.messageId),
      rows.map((r) => r.emoji),
      rows.map((r) => r.subject),
      rows.map((r) => r.room),
      rows.map((r) => r.createdAt),
      rows.map((_, i) => firstPosition + i),
    ],
  );
}

/** Adds `total` reactions to a seeded PostgreSQL schema's messages, then settles them (settleTables). */
export async function seedPostgresReactions(url: string, total: number): Promise<ReactionSpread> {
  const started = performance.now();
  const client = await schemaClient(url);
  try {
    const { rows: countRows } = await client.query<{ n: number }>(
      'SELECT count(*)::integer AS n FROM messages',
    );
    const counts = reactionCounts(countRows[0]!.n, total);
    let index = 0;
    let position = 1;
    let after = '00000000-0000-0000-0000-000000000000';
    let chunk: ReactionRow[] = [];
    const flush = async () => {
      if (chunk.length === 0) return;
      await insertPostgresReactions(client, chunk, position);
      position += chunk.length;
      chunk = [];
    };
    for (;;) {
      // Keyset pages in id order: the same message order as on SQLite.
      const { rows } = await client.query<{ id: string; room: string; created_ms: number }>(
        `SELECT id::text AS id, room, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
         FROM messages WHERE id > $1::uuid ORDER BY id LIMIT 50000`,
        [after],
      );
      if (rows.length === 0) break;
      for (const m of rows) {
        const n = counts[index]!;
        if (n > 0)
          chunk.push(...reactionsOf(index, n, { id: m.id, room: m.room, createdMs: m.created_ms }));
        index++;
      }
      after = rows[rows.length - 1]!.id;
      if (chunk.length >= 10_000) await flush();
    }
    await flush();
    // The store's next reaction takes the sequence's next value: after these.
    await client.query(`SELECT setval(pg_get_serial_sequence('reactions', 'position'), $1)`, [
      Math.max(1, position - 1),
    ]);
    await settleTables(client, ['reactions']);
    return spreadOf(counts, (performance.now() - started) / 1000);
  } finally {
    await client.end();
  }
}
