/** The change log on SQLite: one table, numbered by AUTOINCREMENT, read only as far as it is durable. */
import type { Statement } from 'better-sqlite3';
import type { Change, ChangeKind, NewChange } from '../../domain/change.ts';
import type { ChangeLog, ChangeLogBounds } from '../../domain/change-log.ts';
import { toStoreError } from './errors.ts';
import type { SqliteSession } from './sqlite-store.ts';

type ChangeRow = [number, ChangeKind, string, string, string | null, number];

export class SqliteChangeLog implements ChangeLog {
  readonly #session: SqliteSession;
  readonly #append: Statement;
  readonly #since: Statement;
  readonly #latest: Statement;
  readonly #bounds: Statement;
  readonly #lastPurgeable: Statement;
  readonly #deleteThrough: Statement;
  readonly #setPurgedThrough: Statement;
  /**
   * The last change known to be on disk. Readers of the change log (the
   * event stream, Event-Seq) see no further, so no one is told of a change
   * that a power loss could still take back and give its number to another.
   */
  #durableSeq = Number.MAX_SAFE_INTEGER;

  constructor(session: SqliteSession) {
    this.#session = session;
    const db = session.db;
    this.#append = db.prepare(
      'INSERT INTO changes (kind, room, data, subject, made_private, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.#since = db
      .prepare(
        'SELECT seq, kind, room, data, subject, made_private FROM changes WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?',
      )
      .raw();
    this.#latest = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").pluck();
    this.#bounds = db.prepare(
      `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0) AS latest,
              (SELECT purged_through FROM change_log_meta WHERE id = 1) AS purgedThrough`,
    );
    // The newest change is always kept, so the latest sequence survives any purge.
    this.#lastPurgeable = db
      .prepare(
        'SELECT MAX(seq) FROM changes WHERE created_at < ? AND seq < (SELECT MAX(seq) FROM changes)',
      )
      .pluck();
    this.#deleteThrough = db.prepare('DELETE FROM changes WHERE seq <= ?');
    this.#setPurgedThrough = db.prepare(
      'UPDATE change_log_meta SET purged_through = ? WHERE id = 1',
    );
  }

  /** Appends a message's change (data: its JSON text); called inside a write, so it commits with it. */
  append(kind: ChangeKind, room: string, json: string): void {
    this.#append.run(kind, room, json, null, 0, new Date().toISOString());
  }

  /** Appends any change; called inside a write, so it commits with it. */
  add(change: NewChange): void {
    this.#append.run(
      change.kind,
      change.room,
      change.data,
      change.subject,
      change.madePrivate ? 1 : 0,
      new Date().toISOString(),
    );
  }

  /** The newest change committed so far, durable or not. */
  latestSeq(): number {
    return (this.#latest.get() as number | undefined) ?? 0;
  }

  /** From now on readers see only the changes that `durableThrough` reported on disk. */
  trackDurability(): void {
    this.#durableSeq = this.latestSeq();
  }

  durableThrough(seq: number): void {
    if (seq > this.#durableSeq) this.#durableSeq = seq;
  }

  async bounds(): Promise<ChangeLogBounds> {
    try {
      this.#session.snapshot();
      return this.readBounds();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** The bounds as the current transaction sees them (a list reads them in its own snapshot). */
  readBounds(): ChangeLogBounds {
    const bounds = this.#bounds.get() as ChangeLogBounds;
    // Readers of the change log see no further than the last change known to be on disk.
    return bounds.latest <= this.#durableSeq
      ? bounds
      : { ...bounds, latest: Math.max(this.#durableSeq, bounds.purgedThrough) };
  }

  async since(after: number, limit: number): Promise<Change[]> {
    try {
      this.#session.snapshot();
      const rows = this.#since.all(after, this.#durableSeq, limit) as ChangeRow[];
      return rows.map((row) => ({
        seq: row[0],
        kind: row[1],
        room: row[2],
        data: row[3],
        subject: row[4],
        madePrivate: row[5] === 1,
      }));
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async purge(before: Date): Promise<void> {
    await this.#session.write(() => {
      const purged = this.#lastPurgeable.get(before.toISOString()) as number | null;
      if (purged !== null) {
        this.#deleteThrough.run(purged);
        this.#setPurgedThrough.run(purged);
      }
    });
  }

  /** A SQLite file belongs to one process: every change it sees is its own, woken by the service. */
  watch(): () => Promise<void> {
    return async () => undefined;
  }
}
