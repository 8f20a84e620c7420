/**
 * Reactions on PostgreSQL: each write in a transaction under the message's
 * row lock, so the writes of one message take turns (the cap on emoji is
 * judged on what is there, a reaction's place follows the one before, and a
 * message's delete, which takes the same lock, removes every reaction of it).
 * A reaction's place is drawn from a sequence under that lock: the order
 * they were made. The (message, emoji, position) index serves the summary,
 * the reactors of an emoji and the batch of summaries.
 */
import type pg from 'pg';
import type { Reaction, ReactionSummary } from '../../domain/reaction.ts';
import { reactionAdded, reactionRemoved } from '../../domain/reaction-changes.ts';
import { decidePut, decideRemove, reactionFacts, reactorPage } from '../../domain/reaction-rows.ts';
import type {
  DecideReaction,
  ReactionFacts,
  ReactionKey,
  ReactionStore,
  ReactionWriteOutcome,
  ReactorPage,
  RoomedSummary,
} from '../../domain/reaction-store.ts';
import { appendChange } from './changes.ts';
import type { PostgresSession } from './postgres-store.ts';
import { iso, shareAccess } from './room-sql.ts';
import { readableSql } from './list-sql.ts';

/** A message's emoji, counted, for `me` = $me; one row per emoji, by its earliest reaction. */
const EMOJI_COUNTS = (message: string, me: string) => `SELECT emoji, count(*)::integer AS count,
    coalesce(bool_or(subject = ${me}), false) AS me, min(position) AS first
  FROM reactions WHERE message_id = ${message} GROUP BY emoji`;

const SUMMARY = `SELECT m.room, r.emoji, r.count, r.me FROM messages m
  LEFT JOIN LATERAL (${EMOJI_COUNTS('m.id', '$2::text')}) r ON true
  WHERE m.id = $1::uuid ORDER BY r.first`;

/** Reactors after `$3`'s place ($3 null: from the first); `found` is false when $3 has none. */
const REACTORS = `SELECT m.room, p.subject, ${iso('p.created_at')} AS "createdAt",
    ($3::text IS NULL OR a.after IS NOT NULL) AS found
  FROM messages m
  CROSS JOIN LATERAL (SELECT CASE WHEN $3::text IS NULL THEN 0 ELSE (
    SELECT position FROM reactions WHERE message_id = m.id AND emoji = $2 AND subject = $3::text)
    END AS after) a
  LEFT JOIN LATERAL (
    SELECT subject, created_at, position FROM reactions
    WHERE message_id = m.id AND emoji = $2 AND position > a.after
    ORDER BY position LIMIT $4::integer + 1
  ) p ON true
  WHERE m.id = $1::uuid ORDER BY p.position`;

/** Only messages of rooms $3 may read (room-access.ts mayRead, as list-sql.ts says it). */
const READABLE = `WHERE ${readableSql('m.room', '$3::text')}`;

/**
 * One message's summary as JSON text: byte for byte what JSON.stringify writes (to_json escapes a
 * string as it does). Grouped and ordered only for a message that has reactions (most have none):
 * the ordered aggregate sets up a sort even for no rows (a 50-id batch cost the database about a
 * tenth more without this check: measured on 1M messages, 200,000 reactions).
 */
const SUMMARY_JSON = (message: string, me: string) => `CASE
    WHEN NOT EXISTS (SELECT 1 FROM reactions WHERE message_id = ${message}) THEN '[]'
    ELSE coalesce((SELECT '[' || string_agg(
      '{"emoji":' || to_json(e.emoji)::text || ',"count":' || e.count
        || ',"me":' || CASE WHEN e.me THEN 'true' ELSE 'false' END || '}',
      ',' ORDER BY e.first) || ']'
    FROM (${EMOJI_COUNTS(message, me)}) e), '[]') END`;

/**
 * The summaries of the asked messages in one statement, as the answer's JSON
 * text: each id found by key, its reactions grouped on the index, in the
 * order asked ($1: a JSON array of ids, no repeats). One text rather than a
 * row per emoji, grouped and serialized here: node-postgres builds an object
 * per row and a string per cell, and the ids go as one text rather than an
 * array the driver escapes element by element.
 */
export function batchSql(readable: boolean): string {
  return `SELECT coalesce('[' || string_agg('{"messageId":"' || m.id::text || '","reactions":'
        || ${SUMMARY_JSON('m.id', '$2::text')} || '}', ',' ORDER BY a.n) || ']', '[]') AS json
    FROM json_array_elements_text($1::json) WITH ORDINALITY AS a(id, n)
    JOIN messages m ON m.id = a.id::uuid
    ${readable ? READABLE : ''}`;
}

/**
 * The facts of one reaction of a message, read after its row lock was taken:
 * in a statement of its own, so that its snapshot (READ COMMITTED: one per
 * statement) holds every write of the message committed before the lock was
 * granted. Read in the locking statement, they would be as of before the wait.
 */
const FACTS = `SELECT m.room,
    (SELECT ${iso('created_at')} FROM reactions
      WHERE message_id = m.id AND emoji = $2 AND subject = $3) AS current_at,
    (SELECT count(DISTINCT emoji) FROM reactions WHERE message_id = m.id)::integer AS emoji_count,
    EXISTS (SELECT 1 FROM reactions WHERE message_id = m.id AND emoji = $2) AS emoji_present
  FROM messages m WHERE m.id = $1::uuid`;

interface FactsRow {
  room: string;
  current_at: string | null;
  emoji_count: number;
  emoji_present: boolean;
}

interface SummaryRow {
  emoji: string | null;
  count: number;
  me: boolean;
}

export class PostgresReactions implements ReactionStore {
  readonly #session: PostgresSession;

  constructor(session: PostgresSession) {
    this.#session = session;
  }

  put(
    key: ReactionKey,
    now: string,
    decide: DecideReaction,
    reader: string | null = null,
  ): Promise<ReactionWriteOutcome> {
    return this.#session.transaction(async (client) => {
      const outcome = decidePut(key, now, await lockFacts(client, key, reader), decide);
      if (!outcome.created) return outcome;
      await client.query({
        name: 'insert-reaction',
        text: `INSERT INTO reactions (message_id, emoji, subject, room, created_at)
          VALUES ($1, $2, $3, $4, $5)`,
        values: [key.messageId, key.emoji, key.subject, outcome.reaction.room, now],
      });
      // The change log's lock comes last, after every row lock (see migrations.ts).
      await appendChange(client, reactionAdded(outcome.reaction));
      return outcome;
    });
  }

  remove(
    key: ReactionKey,
    decide: DecideReaction,
    reader: string | null = null,
  ): Promise<Reaction> {
    return this.#session.transaction(async (client) => {
      const removed = decideRemove(await lockFacts(client, key, reader), decide);
      await client.query({
        name: 'delete-reaction',
        text: 'DELETE FROM reactions WHERE message_id = $1 AND emoji = $2 AND subject = $3',
        values: [key.messageId, key.emoji, key.subject],
      });
      await appendChange(client, reactionRemoved(removed));
      return removed;
    });
  }

  async summary(messageId: string, subject: string | null): Promise<RoomedSummary | undefined> {
    const rows = await this.#session.query<SummaryRow & { room: string }>(
      'reaction-summary',
      SUMMARY,
      [messageId, subject],
    );
    if (rows.length === 0) return undefined;
    return { room: rows[0]!.room, reactions: summariesOf(rows) };
  }

  async reactors(
    messageId: string,
    emoji: string,
    query: { readonly after?: string; readonly limit: number },
  ): Promise<ReactorPage | undefined> {
    const rows = await this.#session.query<{
      room: string;
      subject: string | null;
      createdAt: string | null;
      found: boolean;
    }>('reaction-reactors', REACTORS, [messageId, emoji, query.after ?? null, query.limit]);
    const first = rows[0];
    if (first === undefined) return undefined;
    if (!first.found) return { room: first.room, items: [], more: false, afterFound: false };
    const read: Reaction[] = rows
      .filter((r) => r.subject !== null)
      .map((r) => ({
        messageId,
        room: first.room,
        emoji,
        subject: r.subject!,
        createdAt: r.createdAt!,
      }));
    return reactorPage(first.room, read, query.limit);
  }

  async summaries(
    messageIds: readonly string[],
    subject: string | null,
    readableBy?: string,
  ): Promise<string> {
    const ids = JSON.stringify(messageIds);
    const [row] = await (readableBy === undefined
      ? this.#session.query<{ json: string }>('reaction-summaries', batchSql(false), [ids, subject])
      : this.#session.query<{ json: string }>('reaction-summaries-readable', batchSql(true), [
          ids,
          subject,
          readableBy,
        ]));
    return row!.json;
  }
}

/** Within a message's delete (its row locked): its reactions go with it, no change of their own. */
export async function removeReactionsOf(client: pg.PoolClient, messageId: string): Promise<void> {
  await client.query({
    name: 'delete-message-reactions',
    text: 'DELETE FROM reactions WHERE message_id = $1',
    values: [messageId],
  });
}

/** The facts under the message's lock; with a reader, its access facts under the room's share lock too. */
async function lockFacts(
  client: pg.PoolClient,
  key: ReactionKey,
  reader: string | null,
): Promise<ReactionFacts> {
  await client.query({
    name: 'lock-message-for-reaction',
    // NO KEY UPDATE: reaction writes of one message take turns, and a delete (FOR UPDATE) waits
    // for them, but a reply being created (which holds its message KEY SHARE) does not.
    text: 'SELECT 1 FROM messages WHERE id = $1::uuid FOR NO KEY UPDATE',
    values: [key.messageId],
  });
  const { rows } = await client.query<FactsRow>({
    name: 'reaction-facts',
    text: FACTS,
    values: [key.messageId, key.emoji, key.subject],
  });
  const row = rows[0];
  return reactionFacts(
    key,
    row && {
      room: row.room,
      currentAt: row.current_at ?? undefined,
      emojiCount: row.emoji_count,
      emojiPresent: row.emoji_present,
      access: reader === null ? undefined : await shareAccess(client, row.room, reader),
    },
  );
}

function summariesOf(rows: readonly SummaryRow[]): ReactionSummary[] {
  return rows
    .filter((r) => r.emoji !== null)
    .map((r) => ({ emoji: r.emoji!, count: r.count, me: r.me }));
}
