/**
 * The PostgreSQL store, through a node-postgres pool; many instances may
 * share one database. This object owns the pool and ties the concerns
 * together (messages.ts, changes.ts, idempotency.ts, rooms.ts, members.ts,
 * read-markers.ts, reactions.ts); they share it through
 * a PostgresSession.
 */
import pg from 'pg';
import type { Store } from '../../domain/store.ts';
import { notMigrated, storeUnavailable } from '../../domain/store-errors.ts';
import { PostgresChangeLog } from './changes.ts';
import { isConnectionLost, StoreTimeout, toStoreError } from './errors.ts';
import { PostgresIdempotency } from './idempotency.ts';
import { PostgresMembers } from './members.ts';
import { PostgresMessages } from './messages.ts';
import { PostgresReactions } from './reactions.ts';
import { PostgresReadMarkers } from './read-markers.ts';
import { PostgresRooms } from './rooms.ts';
import { runMigrations } from '../../domain/migration-runner.ts';
import { postgresMigrations, postgresMigrationTarget } from './migrations.ts';

export interface PostgresStoreOptions {
  readonly url: string;
  readonly poolSize: number;
  readonly timeoutMs: number;
  /** Errors of idle connections: logged, never thrown. */
  readonly onBackgroundError: (error: Error) => void;
  /** Creates and gets batched per turn (default); off: one query each (BATCHING=off). */
  readonly batching?: boolean;
}

/** What the concerns share: the pool, and the store timeout around each operation. */
export interface PostgresSession {
  /** One statement on any connection of the pool, within the store timeout; rows as they come. */
  query<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]): Promise<R[]>;
  /** `work` in one transaction on one connection, within the store timeout; rolled back if it throws. */
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /**
   * `operation`, or a 503 once the store timeout has passed (see #withDeadline);
   * the signal aborts then, for work that can still be called off.
   */
  withDeadline<T>(operation: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/**
 * Splits `?schema=name` off the URL: each schema is a separate store in one
 * database. The URL's own `options` (server settings, `-c name=value`) are
 * kept, after the store's: set here, the store's would otherwise replace them.
 */
export function connectionConfig(url: string, poolSize: number, timeoutMs: number): pg.PoolConfig {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  const options = parsed.searchParams.get('options');
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('options');
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error('the schema parameter must be a lowercase SQL identifier');
  }
  return {
    connectionString: parsed.toString(),
    max: poolSize,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'message-service',
    // Every statement is prepared once per connection and its generic plan is what it should
    // be (index scans; test/store/list-plans.test.ts checks them). By default PostgreSQL keeps
    // planning a statement anew on every execution whenever it estimates the generic plan
    // dearer than a custom one (a parameter LIMIT is enough for that): planning was most of
    // the database's CPU for a history page (measured). A generic plan cannot see a page's
    // LIMIT, so it is costed as if it read a tenth of the rows: on 1M messages a batch of room
    // pages came out above jit_above_cost, and PostgreSQL compiled it with LLVM at every
    // execution (about 5 ms for 20 pages that then ran in 1). No statement here runs long
    // enough for JIT to pay.
    options: [
      '-c plan_cache_mode=force_generic_plan',
      '-c jit=off',
      ...(schema === null ? [] : [`-c search_path=${schema}`]),
      ...(options === null ? [] : [options]),
    ].join(' '),
  };
}

/** A checked-out connection's state, for the work done on it (see #withClient). */
interface ClientUse {
  /** The connection cannot be trusted any more: it is closed, not given back. */
  readonly drop: (error: Error) => void;
  readonly lost: () => boolean;
}

export class PostgresStore implements Store {
  readonly engine = 'postgres';
  readonly messages: PostgresMessages;
  readonly changes: PostgresChangeLog;
  readonly idempotency: PostgresIdempotency;
  readonly rooms: PostgresRooms;
  readonly members: PostgresMembers;
  readonly readMarkers: PostgresReadMarkers;
  readonly reactions: PostgresReactions;
  readonly #pool: pg.Pool;
  readonly #schema: string | null;
  readonly #timeoutMs: number;
  readonly #config: pg.PoolConfig;
  #migrated = false;

  constructor(options: PostgresStoreOptions) {
    const config = connectionConfig(options.url, options.poolSize, options.timeoutMs);
    this.#schema = new URL(options.url).searchParams.get('schema');
    this.#timeoutMs = options.timeoutMs;
    this.#config = config;
    this.#pool = new pg.Pool(config);
    this.#pool.on('error', (error) => options.onBackgroundError(error));
    const session: PostgresSession = {
      query: <R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) =>
        this.#query<R>(name, text, values),
      transaction: <T>(work: (client: pg.PoolClient) => Promise<T>) =>
        this.#withDeadline(() => this.#runTransaction(work)),
      withDeadline: <T>(operation: (signal: AbortSignal) => Promise<T>) =>
        this.#withDeadline(operation),
    };
    this.messages = new PostgresMessages(session, options.batching ?? true);
    this.changes = new PostgresChangeLog(
      session,
      { config, schema: this.#schema, onError: options.onBackgroundError },
      options.batching ?? true,
    );
    this.idempotency = new PostgresIdempotency(session);
    this.rooms = new PostgresRooms(session);
    this.members = new PostgresMembers(session);
    this.readMarkers = new PostgresReadMarkers(session);
    this.reactions = new PostgresReactions(session);
  }

  async migrate(): Promise<void> {
    // A connection of its own with no query timeout: upgrading a large store (an index
    // rebuilt, a table filled) takes as long as it takes, and the pool's deadline is for requests.
    const client = new pg.Client({ ...this.#config, query_timeout: undefined });
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error; // see #runTransaction: a client's errors are ours to catch
    };
    client.on('error', onError);
    try {
      await client.connect();
      await runMigrations(postgresMigrationTarget(client, this.#schema), postgresMigrations);
      this.#migrated = true;
    } catch (error) {
      throw toStoreError(broken ?? error);
    } finally {
      client.removeListener('error', onError);
      await client.end().catch(() => undefined);
    }
  }

  async ping(): Promise<void> {
    if (!this.#migrated) throw notMigrated();
    await this.#query('ping', 'SELECT 1', []);
  }

  async close(): Promise<void> {
    await this.changes.stopWatching();
    // A second close (a second signal during shutdown) is a no-op, as on SQLite.
    if (!this.#pool.ended) await this.#pool.end();
  }

  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async #query<R extends pg.QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<R[]> {
    return this.#withDeadline(() =>
      this.#withClient(async (client) => {
        const result = await client.query<R>({ name, text, values });
        // The rows leave the result. With node-postgres' query timeout set (a timer per query,
        // whose callback holds the query and so its result), results survive young collections:
        // each page's JSON reached the old generation and stayed until a full collection.
        // bench/pg-result-retention.ts measures it with node-postgres alone (120 MB of texts:
        // about 120 MB survived, 5 MB without the timeout, 8 MB with it and the rows taken out).
        // Why the cleared timer still counts is not found; taking the rows out is enough.
        const rows = result.rows;
        result.rows = [];
        return rows;
      }),
    );
  }

  /**
   * One store operation answers within the store timeout, whole: waiting for
   * a pool connection and each query have their own timeouts, but in a row
   * they could add up. The late operation still ends by itself; a write that
   * commits after its 503 is allowed (it happened fully), and a create whose
   * claim was freed meanwhile rolls back (see the create_messages function).
   * A create still queued for its batch is called off (the signal).
   */
  #withDeadline<T>(operation: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new AbortController();
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = storeUnavailable(new StoreTimeout());
        reject(error);
        late.abort(error);
      }, this.#timeoutMs);
    });
    return Promise.race([operation(late.signal), deadline]).finally(() => clearTimeout(timer));
  }

  /**
   * `work` on a connection of the pool, given back whole afterwards unless the
   * connection itself was lost (an error on it, one `isConnectionLost` names, or
   * `use.drop`): then it is closed. Its errors leave mapped (toStoreError).
   * A statement the database refused leaves its connection as it was:
   * pool.query() would close it, and the next statement
   * would wait for a new connection, prepare its statements again and compile
   * create_messages() again (a batch of creates after one that failed on a bad
   * reply took 8 ms instead of 1, in process; two clients sending bad replies
   * cut the creates of 50 others from 14,000/s to 1,000/s).
   */
  async #withClient<T>(work: (client: pg.PoolClient, use: ClientUse) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    let broken: Error | undefined;
    const use: ClientUse = {
      drop: (error) => {
        broken ??= error;
      },
      lost: () => broken !== undefined,
    };
    // While a client is checked out the pool does not listen for its errors: a database that
    // goes away between two queries would otherwise be an uncaught 'error' that ends the process.
    client.on('error', use.drop);
    try {
      return await work(client, use);
    } catch (error) {
      if (isConnectionLost(error)) use.drop(error as Error);
      throw toStoreError(error);
    } finally {
      client.removeListener('error', use.drop);
      client.release(broken);
    }
  }

  #runTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.#withClient(async (client, use) => {
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A lost or stuck connection cannot roll back (a ROLLBACK would wait out another
        // timeout behind the stuck query): it is dropped, and the server rolls back instead.
        if (!use.lost() && !isConnectionLost(error)) {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackError) {
            use.drop(rollbackError as Error);
          }
        }
        throw error;
      }
    });
  }
}
