/**
 * The change log on PostgreSQL: numbered in commit order by append_change()
 * (see migrations.ts), and watched through LISTEN/NOTIFY (change-listener.ts).
 */
import type pg from 'pg';
import type { Change, ChangeKind, NewChange } from '../../domain/change.ts';
import type { ChangeLog, ChangeLogBounds } from '../../domain/change-log.ts';
import { ChangeListener } from './change-listener.ts';
import type { PostgresSession } from './postgres-store.ts';

export interface ChangeWatchOptions {
  /** The connection settings of the pool: each watcher opens one connection of its own. */
  readonly config: pg.ClientConfig;
  readonly schema: string | null;
  /** Errors of the listening connection: logged, never thrown. */
  readonly onError: (error: Error) => void;
}

/** Appends a change inside the write's transaction (`client` is in it), in commit order. */
export async function appendChange(client: pg.PoolClient, change: NewChange): Promise<void> {
  await client.query({
    name: 'append-change',
    text: 'SELECT append_change($1, $2, $3, $4, $5)',
    values: [change.kind, change.room, change.data, change.subject, change.madePrivate],
  });
}

/** A message's change: its data is the message's JSON text. */
export function messageChange(kind: ChangeKind, room: string, json: string): NewChange {
  return { kind, room, data: json, subject: null, madePrivate: false };
}

export class PostgresChangeLog implements ChangeLog {
  readonly #session: PostgresSession;
  readonly #watch: ChangeWatchOptions;
  readonly #batching: boolean;
  readonly #listeners = new Set<ChangeListener>();
  /** The bounds read that has not been sent yet: everyone who asks before it goes out shares it. */
  #nextBounds: Promise<ChangeLogBounds> | undefined;

  constructor(session: PostgresSession, watch: ChangeWatchOptions, batching = true) {
    this.#session = session;
    this.#watch = watch;
    this.#batching = batching;
  }

  /**
   * Every room list asks where the log stands, and on PostgreSQL a query's
   * cost is mostly node-postgres' own, however small the query. The reads
   * asked for in one turn share one query, sent at the end of the turn
   * (docs/schedulers.md): each answer was still read after its question.
   */
  bounds(): Promise<ChangeLogBounds> {
    if (!this.#batching) return this.#readBounds();
    this.#nextBounds ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.#nextBounds = undefined;
      return this.#readBounds();
    });
    return this.#nextBounds;
  }

  async #readBounds(): Promise<ChangeLogBounds> {
    const rows = await this.#session.query<{ latest: string; purged_through: string }>(
      'change-log-bounds',
      `SELECT COALESCE((SELECT max(seq) FROM changes), m.purged_through) AS latest, m.purged_through
       FROM change_log_meta m WHERE m.id = 1`,
      [],
    );
    const row = rows[0]!;
    return { latest: Number(row.latest), purgedThrough: Number(row.purged_through) };
  }

  async since(after: number, limit: number): Promise<Change[]> {
    const rows = await this.#session.query<{
      seq: string;
      kind: ChangeKind;
      room: string;
      data: string;
      subject: string | null;
      made_private: boolean;
    }>(
      'changes-since',
      `SELECT seq, kind, room, data, subject, made_private FROM changes
       WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [after, limit],
    );
    return rows.map((row) => ({
      seq: Number(row.seq),
      kind: row.kind,
      room: row.room,
      data: row.data,
      subject: row.subject,
      madePrivate: row.made_private,
    }));
  }

  async purge(before: Date): Promise<void> {
    await this.#session.transaction(async (client) => {
      // The newest change is always kept, so the latest sequence survives any purge.
      const { rows } = await client.query<{ through: string | null }>(
        `SELECT max(seq) AS through FROM changes
         WHERE created_at < $1 AND seq < (SELECT max(seq) FROM changes)`,
        [before.toISOString()],
      );
      const through = rows[0]?.through ?? null;
      if (through !== null) {
        await client.query('DELETE FROM changes WHERE seq <= $1', [through]);
        await client.query(
          'UPDATE change_log_meta SET purged_through = GREATEST(purged_through, $1) WHERE id = 1',
          [through],
        );
      }
    });
  }

  /**
   * Calls `wake` whenever any instance commits a change (LISTEN on a dedicated
   * connection outside the pool), and after every reconnect, since
   * notifications sent while disconnected are lost: the log is the truth.
   */
  watch(wake: () => void): () => Promise<void> {
    const listener = new ChangeListener({
      config: this.#watch.config,
      channel: 'message_changes',
      prefix: `${this.#watch.schema ?? 'public'}:`,
      wake,
      onError: this.#watch.onError,
    });
    this.#listeners.add(listener);
    listener.start();
    return async () => {
      this.#listeners.delete(listener);
      await listener.stop();
    };
  }

  /** Stops every watcher (the store is closing). */
  async stopWatching(): Promise<void> {
    await Promise.all([...this.#listeners].map((l) => l.stop()));
  }
}
