/**
 * The SQLite store: one file, one process, WAL, group commit. This object
 * owns the connection and ties the concerns together (messages.ts,
 * changes.ts, idempotency.ts, rooms.ts, members.ts, read-markers.ts,
 * reactions.ts); they
 * share it through a SqliteSession.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { SqliteSynchronous } from '../../config.ts';
import type { ChangeLog } from '../../domain/change-log.ts';
import type { IdempotencyStore } from '../../domain/idempotency-store.ts';
import type { MessageStore } from '../../domain/message-store.ts';
import type { MemberStore, ReadMarkerStore, RoomStore } from '../../domain/room-store.ts';
import type { ReactionStore } from '../../domain/reaction-store.ts';
import type { Store } from '../../domain/store.ts';
import { notMigrated } from '../../domain/store-errors.ts';
import { SqliteChangeLog } from './changes.ts';
import { isBusy, toStoreError } from './errors.ts';
import { SqliteIdempotency } from './idempotency.ts';
import { SqliteMembers } from './members.ts';
import { openDatabase, pragma } from './native-handles.ts';
import { SqliteMessages } from './messages.ts';
import { SqliteReactions } from './reactions.ts';
import { SqliteReadMarkers } from './read-markers.ts';
import { SqliteRooms } from './rooms.ts';
import { runMigrations } from '../../domain/migration-runner.ts';
import { sqliteMigrations, sqliteMigrationTarget } from './migrations.ts';
import { InstanceLock, type InstanceLockOptions } from './instance-lock.ts';
import { WalSync } from './wal-sync.ts';
import { WriteBatcher } from './write-batcher.ts';

/** How long a statement waits for another connection's lock. */
const BUSY_TIMEOUT_MS = 5000;
/** How long migrate() waits for another process's migration (one can take minutes at 1M messages). */
const MIGRATION_BUSY_TIMEOUT_MS = 600_000;
/**
 * The write-ahead log is cut back to this size once a checkpoint has copied it
 * into the file. SQLite reuses the log from its start but never shrinks it by
 * itself: after one large transaction (an upgrade that rewrites or indexes
 * every message: 390 MB on 1M messages) it stayed that large until the process
 * stopped. Everyday group commits keep it near SQLite's 1,000-page checkpoint
 * mark (4 MB), well under this.
 */
const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

export interface SqliteStoreOptions {
  /** A file path, or ':memory:'. */
  readonly filename: string;
  readonly synchronous: SqliteSynchronous;
  /**
   * Reads share a transaction per turn, writes a group commit and its flush
   * (default); off: each read its own statement, each write its own
   * transaction and flush (BATCHING=off).
   */
  readonly batching?: boolean;
  /**
   * The service's stores hold the file for as long as they are open
   * (instance-lock.ts); unset: no lock (tools and tests that open a file
   * beside a running service, or race on purpose).
   */
  readonly instanceLock?: InstanceLockOptions;
}

/** What the concerns share: the one connection, its read snapshot, and the group commit. */
export interface SqliteSession {
  readonly db: Database.Database;
  /** Call right before a read: the read joins this turn's read transaction (see #snapshot). */
  readonly snapshot: () => void;
  /** Runs `write` inside a group transaction; resolves once that commit is durable. */
  write<T>(write: () => T): Promise<T>;
  /** Within a write: `work` runs at the end of its transaction, and only if the write succeeded. */
  atCommit(work: () => void): void;
}

interface Concerns {
  readonly messages: SqliteMessages;
  readonly changes: SqliteChangeLog;
  readonly idempotency: SqliteIdempotency;
  readonly rooms: SqliteRooms;
  readonly members: SqliteMembers;
  readonly readMarkers: SqliteReadMarkers;
  readonly reactions: SqliteReactions;
}

export class SqliteStore implements Store {
  readonly engine = 'sqlite';
  readonly #db: Database.Database;
  readonly #batcher: WriteBatcher;
  readonly #session: SqliteSession;
  /** Built by migrate(): their statements need the tables. */
  #concerns: Concerns | undefined;
  readonly #ping: Statement;
  readonly #beginRead: Statement;
  readonly #endReadStatement: Statement;
  #readOpen = false;
  readonly #filename: string;
  /** synchronous=full on a file: commits are made durable by #walSync, off the event loop. */
  readonly #syncWal: boolean;
  #walSync: WalSync | undefined;
  readonly #batching: boolean;
  readonly #lock: InstanceLock | undefined;

  constructor(options: SqliteStoreOptions) {
    const onDisk = options.filename !== ':memory:';
    if (onDisk) mkdirSync(dirname(options.filename), { recursive: true });
    // Before the file is opened: a second process must not migrate it, nor set it to WAL.
    this.#lock =
      onDisk && options.instanceLock !== undefined
        ? InstanceLock.take(options.filename, options.instanceLock)
        : undefined;
    this.#filename = options.filename;
    this.#batching = options.batching ?? true;
    this.#syncWal = options.synchronous === 'full' && onDisk;
    try {
      this.#db = openFile(options.filename, this.#syncWal ? 'NORMAL' : options.synchronous);
    } catch (error) {
      this.#lock?.release();
      throw error;
    }
    this.#ping = this.#db.prepare('SELECT 1');
    this.#beginRead = this.#db.prepare('BEGIN');
    this.#endReadStatement = this.#db.prepare('COMMIT');
    this.#batcher = new WriteBatcher(this.#db, {
      batching: this.#batching,
      mapError: toStoreError,
      beforeTransaction: this.#endRead,
      afterCommit: () => this.#makeDurable(),
    });
    this.#session = {
      db: this.#db,
      snapshot: this.#batching ? this.#snapshot : () => undefined,
      write: this.#batcher.submit.bind(this.#batcher),
      atCommit: this.#batcher.atCommit.bind(this.#batcher),
    };
  }

  get messages(): MessageStore {
    return this.#ready().messages;
  }

  get changes(): ChangeLog {
    return this.#ready().changes;
  }

  get idempotency(): IdempotencyStore {
    return this.#ready().idempotency;
  }

  get rooms(): RoomStore {
    return this.#ready().rooms;
  }

  get members(): MemberStore {
    return this.#ready().members;
  }

  get readMarkers(): ReadMarkerStore {
    return this.#ready().readMarkers;
  }

  get reactions(): ReactionStore {
    return this.#ready().reactions;
  }

  async migrate(): Promise<void> {
    // A process on this file without the instance lock (an earlier version still stopping, a
    // tool) may hold the write lock for a whole migration (minutes on a large upgrade): wait for
    // it rather than fail to start.
    pragma(this.#db, `busy_timeout = ${MIGRATION_BUSY_TIMEOUT_MS}`);
    try {
      await runMigrations(sqliteMigrationTarget(this.#db), sqliteMigrations);
    } finally {
      pragma(this.#db, `busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    this.#concerns ??= concernsOf(this.#session);
    const { changes } = this.#concerns;
    if (this.#syncWal && this.#walSync === undefined) {
      this.#walSync = new WalSync(this.#filename, { shared: this.#batching });
      changes.trackDurability();
    }
  }

  async ping(): Promise<void> {
    if (this.#concerns === undefined) throw notMigrated();
    try {
      this.#ping.get();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async close(): Promise<void> {
    const walSync = this.#walSync;
    this.#walSync = undefined;
    try {
      await walSync?.close();
    } finally {
      if (this.#db.open) this.#db.close();
      this.#lock?.release();
    }
  }

  /** After a group commit: undefined when it is durable already, else a flush of the log. */
  #makeDurable(): Promise<void> | undefined {
    const walSync = this.#walSync;
    if (walSync === undefined) return undefined;
    const changes = this.#ready().changes;
    const seq = changes.latestSeq();
    return walSync.flush().then(() => changes.durableThrough(seq));
  }

  /**
   * Reads share one read transaction per turn of the event loop. Outside a
   * transaction every statement is a transaction of its own, and SQLite
   * takes and drops its file locks for each (three system calls, more than
   * half the CPU time of a GET by id, measured). The snapshot ends at the end
   * of the turn, and before each group commit begins (the writes all go
   * through the batcher on this same connection), so a read never misses a
   * commit that finished before it started. With batching off each read is
   * a statement of its own. The order of the per-turn schedulers:
   * docs/schedulers.md.
   */
  readonly #snapshot = (): void => {
    if (this.#db.inTransaction) return;
    this.#beginRead.run();
    this.#readOpen = true;
    setImmediate(this.#endRead);
  };

  readonly #endRead = (): void => {
    if (!this.#readOpen) return;
    this.#readOpen = false;
    if (this.#db.open && this.#db.inTransaction) this.#endReadStatement.run();
  };

  #ready(): Concerns {
    if (this.#concerns === undefined) throw new Error('SqliteStore used before migrate()');
    return this.#concerns;
  }
}

function concernsOf(session: SqliteSession): Concerns {
  const changes = new SqliteChangeLog(session);
  const idempotency = new SqliteIdempotency(session);
  const rooms = new SqliteRooms(session, changes);
  const readMarkers = new SqliteReadMarkers(session, changes, rooms);
  const reactions = new SqliteReactions(session, changes, rooms);
  return {
    messages: new SqliteMessages(session, changes, idempotency, rooms, reactions),
    changes,
    idempotency,
    rooms,
    members: new SqliteMembers(session, changes, rooms, readMarkers),
    readMarkers,
    reactions,
  };
}

/**
 * The store's connection with its settings. With synchronous=full on a file,
 * NORMAL: the log is written at commit and synced by WalSync before any
 * answer (SQLite still syncs around checkpoints, so the file is always
 * consistent).
 */
function openFile(filename: string, synchronous: string): Database.Database {
  const db = openDatabase(filename);
  try {
    // First: another process may hold the write lock (migrating) while this one sets WAL.
    pragma(db, `busy_timeout = ${BUSY_TIMEOUT_MS}`);
    enableWal(db);
    pragma(db, `synchronous = ${synchronous.toUpperCase()}`);
    pragma(db, `journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Switching a new file to WAL needs an exclusive lock that busy_timeout does
 * not wait for: another process opening the file at the same moment makes it
 * fail at once ("database is locked") or leave the mode as it was. Tried
 * again for a while; a short blocking sleep is fine here, as this runs once,
 * at start.
 */
function enableWal(db: Database.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let mode: string;
    try {
      mode = (pragma(db, 'journal_mode = WAL')[0] as { journal_mode: string }).journal_mode;
    } catch (error) {
      if (!isBusy(error)) throw error;
      mode = 'busy';
    }
    // An in-memory database stays 'memory'.
    if (mode === 'wal' || mode === 'memory') return;
    if (Date.now() > deadline) throw new Error(`could not switch the file to WAL (${mode})`);
    Atomics.wait(pause, 0, 0, 20);
  }
}
