/** MessageStore over better-sqlite3: one file, one process, WAL, group commit. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database, { type Statement } from 'better-sqlite3';
import type { SqliteSynchronous } from '../../config.ts';
import { AppError, ErrorKinds } from '../../errors.ts';
import type { Change, ChangeKind } from '../../messages/change.ts';
import { claimLost, decideClaim, type StoredClaim } from '../../messages/idempotency.ts';
import type { ListQuery, Message, NewMessage } from '../../messages/message.ts';
import { lastIdOfMessagesJson, messageJson } from '../../messages/message-json.ts';
import type {
  ChangeLogBounds,
  ClaimOutcome,
  ClaimTiming,
  IdempotencyClaim,
  MessagePage,
  MessageStore,
  StoredResponse,
  WriteCheck,
} from '../../messages/message-store.ts';
import { listStatement, MESSAGE_COLUMNS } from './list-sql.ts';
import { sqliteMigrations } from './migrations.ts';
import { toStoreError } from './sqlite-errors.ts';
import { WalSync } from './wal-sync.ts';
import { WriteBatcher } from './write-batcher.ts';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:'. */
  readonly filename: string;
  readonly synchronous: SqliteSynchronous;
}

/**
 * Message rows are read as arrays (`.raw()`) and built here with one object
 * literal: better-sqlite3's row objects cost about twice as much per row
 * (measured on the list stream), and every message gets the same shape.
 */
type MessageRow = [string, string, string, string, string, string, number];
function toMessage(row: MessageRow): Message {
  return {
    id: row[0],
    room: row[1],
    author: row[2],
    content: row[3],
    createdAt: row[4],
    updatedAt: row[5],
    version: row[6],
  };
}

function readMessage(statement: Statement, id: string): Message | undefined {
  const row = statement.get(id) as MessageRow | undefined;
  return row === undefined ? undefined : toMessage(row);
}

export class SqliteStore implements MessageStore {
  readonly engine = 'sqlite';
  readonly ownedByOneProcess = true;
  readonly #db: Database.Database;
  readonly #batcher: WriteBatcher;
  #statements: ReturnType<typeof prepareStatements> | undefined;
  readonly #listStatements = new Map<string, Statement>();
  readonly #beginRead: Statement;
  readonly #endReadStatement: Statement;
  #readOpen = false;
  readonly #filename: string;
  /** synchronous=full on a file: commits are made durable by #walSync, off the event loop. */
  readonly #syncWal: boolean;
  #walSync: WalSync | undefined;
  /**
   * The last change known to be on disk. Readers of the change log (the
   * event stream, Event-Seq) see no further, so no one is told of a change
   * that a power loss could still take back and give its number to another.
   */
  #durableSeq = Number.MAX_SAFE_INTEGER;

  constructor(options: SqliteStoreOptions) {
    if (options.filename !== ':memory:') mkdirSync(dirname(options.filename), { recursive: true });
    this.#filename = options.filename;
    this.#syncWal = options.synchronous === 'full' && options.filename !== ':memory:';
    this.#db = new Database(options.filename);
    this.#db.pragma('journal_mode = WAL');
    // With #syncWal, NORMAL: the log is written at commit and synced by WalSync before any
    // answer (SQLite still syncs around checkpoints, so the file is always consistent).
    this.#db.pragma(
      `synchronous = ${this.#syncWal ? 'NORMAL' : options.synchronous.toUpperCase()}`,
    );
    this.#db.pragma('busy_timeout = 5000');
    this.#beginRead = this.#db.prepare('BEGIN');
    this.#endReadStatement = this.#db.prepare('COMMIT');
    this.#batcher = new WriteBatcher(this.#db, {
      mapError: toStoreError,
      beforeTransaction: this.#endRead,
      afterCommit: () => this.#makeDurable(),
    });
  }

  async migrate(): Promise<void> {
    this.#db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const applied = new Set(
      this.#db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[],
    );
    const record = this.#db.prepare(
      'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
    );
    for (const migration of sqliteMigrations) {
      if (applied.has(migration.version)) continue;
      this.#db
        .transaction(() => {
          this.#db.exec(migration.sql);
          record.run(migration.version, migration.name, new Date().toISOString());
        })
        .immediate();
    }
    this.#statements = prepareStatements(this.#db);
    if (this.#syncWal && this.#walSync === undefined) {
      this.#walSync = new WalSync(this.#filename);
      this.#durableSeq = (this.#statements.latestChange.get() as number | undefined) ?? 0;
    }
  }

  /** After a group commit: undefined when it is durable already, else a flush of the log. */
  #makeDurable(): Promise<void> | undefined {
    const walSync = this.#walSync;
    if (walSync === undefined) return undefined;
    const seq = (this.#ready().latestChange.get() as number | undefined) ?? 0;
    return walSync.flush().then(() => {
      if (seq > this.#durableSeq) this.#durableSeq = seq;
    });
  }

  create(message: NewMessage, claim?: IdempotencyClaim): Promise<Message> {
    const s = this.#ready();
    const stored: Message = { ...message, updatedAt: message.createdAt, version: 1 };
    return this.#batcher.submit(() => {
      const json = messageJson(stored);
      s.insertMessage.run(
        stored.id,
        stored.room,
        stored.author,
        stored.content,
        stored.createdAt,
        stored.updatedAt,
        stored.version,
        json,
      );
      this.#appendChange('message.created', stored.room, json);
      // A create commits only while its claim is held (as on PostgreSQL): one whose claim was
      // freed or taken over meanwhile must not store a second copy of the retried message.
      if (
        claim !== undefined &&
        s.completeClaim.run({ ...claim, status: 201, response: json }).changes === 0
      ) {
        throw claimLost();
      }
      return stored;
    });
  }

  async get(id: string): Promise<Message | undefined> {
    try {
      const s = this.#ready();
      return this.#read(() => readMessage(s.getMessage, id));
    } catch (error) {
      throw toStoreError(error);
    }
  }

  update(
    id: string,
    content: string,
    now: string,
    check: WriteCheck,
  ): Promise<{ message: Message; changed: boolean } | undefined> {
    const s = this.#ready();
    return this.#batcher.submit(() => {
      const current = readMessage(s.getMessage, id);
      if (current === undefined) return undefined;
      check(current);
      if (current.content === content) return { message: current, changed: false };
      const updated: Message = {
        ...current,
        content,
        updatedAt: now,
        version: current.version + 1,
      };
      const json = messageJson(updated);
      s.updateMessage.run({ ...updated, body: json });
      this.#appendChange('message.updated', updated.room, json);
      return { message: updated, changed: true };
    });
  }

  delete(id: string, check: WriteCheck): Promise<Message | undefined> {
    const s = this.#ready();
    return this.#batcher.submit(() => {
      const current = readMessage(s.getMessage, id);
      if (current === undefined) return undefined;
      check(current);
      s.deleteMessage.run(id);
      this.#appendChange('message.deleted', current.room, messageJson(current));
      return current;
    });
  }

  async list(query: ListQuery & { readonly limit: number }): Promise<MessagePage> {
    const s = this.#ready();
    // One more than asked: whether more lie beyond the page.
    const { text, values } = listStatement({ ...query, limit: query.limit + 1 });
    let statement = this.#listStatements.get(text);
    if (statement === undefined) {
      statement = this.#db.prepare(text).pluck();
      this.#listStatements.set(text, statement);
    }
    try {
      // The same read transaction: the bounds and the rows are one snapshot.
      return this.#read(() => {
        const bounds = this.#clampToDurable(s.changeLogBounds.get() as ChangeLogBounds);
        const rows = statement.all(...values) as string[];
        const more = rows.length > query.limit;
        if (more) rows.length = query.limit;
        const json = rows.join(',');
        return {
          json,
          count: rows.length,
          lastId: lastIdOfMessagesJson(json),
          more,
          latestSeq: bounds.latest,
        };
      });
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async changeLogBounds(): Promise<ChangeLogBounds> {
    try {
      const s = this.#ready();
      return this.#clampToDurable(this.#read(() => s.changeLogBounds.get() as ChangeLogBounds));
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async changesSince(after: number, limit: number): Promise<Change[]> {
    try {
      const s = this.#ready();
      const rows = this.#read(
        () =>
          s.changesSince.all(after, this.#durableSeq, limit) as {
            seq: number;
            kind: ChangeKind;
            message: string;
          }[],
      );
      return rows.map((row) => ({
        seq: row.seq,
        kind: row.kind,
        message: JSON.parse(row.message) as Message,
      }));
    } catch (error) {
      throw toStoreError(error);
    }
  }

  claimIdempotencyKey(claim: IdempotencyClaim, timing: ClaimTiming): Promise<ClaimOutcome> {
    const s = this.#ready();
    const now = timing.now.getTime();
    return this.#batcher.submit((): ClaimOutcome => {
      const row = s.getClaim.get(claim) as StoredClaim | undefined;
      const outcome = decideClaim(row, claim.requestHash, timing);
      if (outcome.kind === 'claimed') s.upsertClaim.run({ ...claim, claimedAt: now });
      return outcome;
    });
  }

  async completeIdempotencyKey(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    const s = this.#ready();
    await this.#batcher.submit(() =>
      s.completeClaim.run({ ...claim, status: response.status, response: response.body }),
    );
  }

  async releaseIdempotencyKey(claim: IdempotencyClaim): Promise<void> {
    const s = this.#ready();
    await this.#batcher.submit(() => s.releaseClaim.run(claim));
  }

  async purge(changesBefore: Date, idempotencyBefore: Date): Promise<void> {
    const s = this.#ready();
    await this.#batcher.submit(() => {
      const cutoff = changesBefore.toISOString();
      const purged = s.lastPurgeableChange.pluck().get(cutoff) as number | null;
      if (purged !== null) {
        s.deleteChangesThrough.run(purged);
        s.setPurgedThrough.run(purged);
      }
      s.deleteOldClaims.run(idempotencyBefore.getTime());
    });
  }

  /** A SQLite file belongs to one process: every change it sees is its own, woken by the service. */
  watchChanges(): () => Promise<void> {
    return async () => undefined;
  }

  async ping(): Promise<void> {
    if (this.#statements === undefined) {
      throw new AppError(ErrorKinds.storeUnavailable, 'Migrations are not applied yet.');
    }
    try {
      this.#statements.ping.get();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async close(): Promise<void> {
    const walSync = this.#walSync;
    this.#walSync = undefined;
    await walSync?.close();
    if (this.#db.open) this.#db.close();
  }

  /**
   * Reads share one read transaction per turn of the event loop. Outside a
   * transaction every statement is a transaction of its own, and SQLite
   * takes and drops its file locks for each (three system calls, more than
   * half the CPU time of a GET by id, measured). The snapshot ends at the end
   * of the turn, and before each group commit begins (the writes all go
   * through the batcher on this same connection), so a read never misses a
   * commit that finished before it started.
   */
  #read<T>(read: () => T): T {
    if (!this.#db.inTransaction) {
      this.#beginRead.run();
      this.#readOpen = true;
      setImmediate(this.#endRead);
    }
    return read();
  }

  readonly #endRead = (): void => {
    if (!this.#readOpen) return;
    this.#readOpen = false;
    if (this.#db.open && this.#db.inTransaction) this.#endReadStatement.run();
  };

  /** Readers of the change log see no further than the last change known to be on disk. */
  #clampToDurable(bounds: ChangeLogBounds): ChangeLogBounds {
    return bounds.latest <= this.#durableSeq
      ? bounds
      : { ...bounds, latest: Math.max(this.#durableSeq, bounds.purgedThrough) };
  }

  #appendChange(kind: ChangeKind, room: string, json: string): void {
    this.#ready().appendChange.run(kind, room, json, new Date().toISOString());
  }

  #ready(): ReturnType<typeof prepareStatements> {
    if (this.#statements === undefined) throw new Error('SqliteStore used before migrate()');
    return this.#statements;
  }
}

function prepareStatements(db: Database.Database) {
  return {
    ping: db.prepare('SELECT 1'),
    getMessage: db.prepare(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ?`).raw(),
    insertMessage: db.prepare(
      'INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    updateMessage: db.prepare(
      'UPDATE messages SET content = @content, updated_at = @updatedAt, version = @version, body = @body WHERE id = @id',
    ),
    deleteMessage: db.prepare('DELETE FROM messages WHERE id = ?'),
    appendChange: db.prepare(
      'INSERT INTO changes (kind, room, message, created_at) VALUES (?, ?, ?, ?)',
    ),
    changesSince: db.prepare(
      'SELECT seq, kind, message FROM changes WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?',
    ),
    latestChange: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").pluck(),
    changeLogBounds: db.prepare(
      `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0) AS latest,
              (SELECT purged_through FROM change_log_meta WHERE id = 1) AS purgedThrough`,
    ),
    // The newest change is always kept, so the latest sequence survives any purge.
    lastPurgeableChange: db.prepare(
      'SELECT MAX(seq) FROM changes WHERE created_at < ? AND seq < (SELECT MAX(seq) FROM changes)',
    ),
    deleteChangesThrough: db.prepare('DELETE FROM changes WHERE seq <= ?'),
    setPurgedThrough: db.prepare('UPDATE change_log_meta SET purged_through = ? WHERE id = 1'),
    getClaim: db.prepare(
      `SELECT request_hash AS requestHash, state, status, response, claimed_at AS claimedAtMs
       FROM idempotency_keys WHERE scope = @scope AND key = @key`,
    ),
    upsertClaim: db.prepare(
      `INSERT INTO idempotency_keys (scope, key, request_hash, token, state, status, response, claimed_at)
       VALUES (@scope, @key, @requestHash, @token, 'pending', NULL, NULL, @claimedAt)
       ON CONFLICT (scope, key) DO UPDATE SET request_hash = excluded.request_hash, token = excluded.token,
         state = 'pending', status = NULL, response = NULL, claimed_at = excluded.claimed_at`,
    ),
    completeClaim: db.prepare(
      `UPDATE idempotency_keys SET state = 'done', status = @status, response = @response
       WHERE scope = @scope AND key = @key AND token = @token`,
    ),
    releaseClaim: db.prepare(
      "DELETE FROM idempotency_keys WHERE scope = @scope AND key = @key AND token = @token AND state = 'pending'",
    ),
    deleteOldClaims: db.prepare('DELETE FROM idempotency_keys WHERE claimed_at < ?'),
  };
}
