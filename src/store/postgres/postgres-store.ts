/** MessageStore over PostgreSQL through a node-postgres pool; many instances may share one database. */
import pg from 'pg';
import { AppError, ErrorKinds } from '../../errors.ts';
import type { Change, ChangeKind } from '../../messages/change.ts';
import { decideClaim, type StoredClaim } from '../../messages/idempotency.ts';
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
import { postgresMigrations } from './migrations.ts';
import { ChangeListener } from './change-listener.ts';
import { CreateBatcher } from './create-batcher.ts';
import { ReadBatcher } from './read-batcher.ts';
import { isConnectionLost, toStoreError, unavailable } from './postgres-errors.ts';

export interface PostgresStoreOptions {
  readonly url: string;
  readonly poolSize: number;
  readonly timeoutMs: number;
  /** Errors of idle connections: logged, never thrown. */
  readonly onBackgroundError: (error: Error) => void;
}

const MIGRATION_LOCK = "hashtext('message-service.migrations')";

/** Splits `?schema=name` off the URL: each schema is a separate store in one database. */
export function connectionConfig(url: string, poolSize: number, timeoutMs: number): pg.PoolConfig {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
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
    ...(schema === null ? {} : { options: `-c search_path=${schema}` }),
  };
}

export class PostgresStore implements MessageStore {
  readonly engine = 'postgres';
  readonly ownedByOneProcess = false;
  readonly #pool: pg.Pool;
  readonly #config: pg.PoolConfig;
  readonly #schema: string | null;
  readonly #onBackgroundError: (error: Error) => void;
  readonly #timeoutMs: number;
  #migrated = false;
  readonly #listeners = new Set<ChangeListener>();
  /** Group commit: creates that arrive while one is committing share the next transaction. */
  readonly #creates = new CreateBatcher({
    one: async (row) => {
      await this.#query(
        'create-message',
        'SELECT create_message($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        [...row],
      );
    },
    many: async (rows) => {
      await this.#query(
        'create-messages',
        `SELECT create_messages($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
           $6::text[], $7::text[], $8::text[], $9::text[])`,
        Array.from({ length: 9 }, (_, column) => rows.map((row) => row[column])),
      );
    },
  });

  /** Gets asked for in one turn of the event loop share one query (see read-batcher.ts). */
  readonly #gets = new ReadBatcher<Message>((ids) =>
    this.#query<Message>(
      'get-messages',
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ANY($1::uuid[])`,
      [ids],
    ),
  );

  constructor(options: PostgresStoreOptions) {
    this.#config = connectionConfig(options.url, options.poolSize, options.timeoutMs);
    this.#schema = new URL(options.url).searchParams.get('schema');
    this.#onBackgroundError = options.onBackgroundError;
    this.#timeoutMs = options.timeoutMs;
    this.#pool = new pg.Pool(this.#config);
    this.#pool.on('error', (error) => options.onBackgroundError(error));
  }

  async migrate(): Promise<void> {
    const client = await this.#connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error; // see #transaction: a checked-out client's errors are ours to catch
    };
    client.on('error', onError);
    try {
      // One instance migrates at a time; the others wait, then find nothing left to do.
      await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
      try {
        if (this.#schema !== null)
          await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.#schema}`);
        await client.query(
          'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
        );
        const { rows } = await client.query<{ version: number }>(
          'SELECT version FROM schema_migrations',
        );
        const applied = new Set(rows.map((r) => r.version));
        for (const migration of postgresMigrations) {
          if (applied.has(migration.version)) continue;
          await client.query('BEGIN');
          try {
            await client.query(migration.sql);
            await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
              migration.version,
              migration.name,
            ]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        }
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
      }
      this.#migrated = true;
    } catch (error) {
      throw toStoreError(error);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  async create(message: NewMessage, claim?: IdempotencyClaim): Promise<Message> {
    const stored: Message = { ...message, updatedAt: message.createdAt, version: 1 };
    // The deadline counts the wait for the batch ahead too (a hung batch holds the next one).
    await this.#withDeadline(() =>
      this.#creates.submit([
        stored.id,
        stored.room,
        stored.author,
        stored.content,
        stored.createdAt,
        messageJson(stored),
        claim?.scope ?? null,
        claim?.key ?? null,
        claim?.token ?? null,
      ]),
    );
    return stored;
  }

  get(id: string): Promise<Message | undefined> {
    return this.#gets.get(id);
  }

  update(
    id: string,
    content: string,
    now: string,
    check: WriteCheck,
  ): Promise<{ message: Message; changed: boolean } | undefined> {
    return this.#transaction(async (client) => {
      const current = await this.#lockMessage(client, id);
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
      await client.query({
        name: 'update-message',
        text: 'UPDATE messages SET content = $2, updated_at = $3, version = $4, body = $5 WHERE id = $1',
        values: [id, content, now, updated.version, json],
      });
      await this.#appendChange(client, 'message.updated', updated.room, json);
      return { message: updated, changed: true };
    });
  }

  delete(id: string, check: WriteCheck): Promise<Message | undefined> {
    return this.#transaction(async (client) => {
      const current = await this.#lockMessage(client, id);
      if (current === undefined) return undefined;
      check(current);
      await client.query({
        name: 'delete-message',
        text: 'DELETE FROM messages WHERE id = $1',
        values: [id],
      });
      await this.#appendChange(client, 'message.deleted', current.room, messageJson(current));
      return current;
    });
  }

  async list(query: ListQuery & { readonly limit: number }): Promise<MessagePage> {
    const statement = listStatement(query);
    if (statement.kind === 'aggregated') {
      const [row] = await this.#query<{ latest: string; count: number; json: string | null }>(
        statement.name,
        statement.text,
        statement.values,
      );
      const json = row!.json ?? '';
      return {
        json,
        count: Math.min(row!.count, query.limit),
        lastId: lastIdOfMessagesJson(json),
        more: row!.count > query.limit,
        latestSeq: Number(row!.latest),
      };
    }
    const rows = await this.#query<{ latest: string; id: string | null; body: string | null }>(
      statement.name,
      statement.text,
      statement.values,
    );
    const found = rows.filter((r) => r.id !== null);
    found.sort((a, b) => (a.id! < b.id! ? -1 : a.id! > b.id! ? 1 : 0));
    if (query.order === 'desc') found.reverse();
    const page = found.slice(0, query.limit);
    return {
      json: page.map((r) => r.body).join(','),
      count: page.length,
      lastId: page[page.length - 1]?.id ?? undefined,
      more: found.length > query.limit,
      latestSeq: Number(rows[0]!.latest),
    };
  }

  async changeLogBounds(): Promise<ChangeLogBounds> {
    const rows = await this.#query<{ latest: string; purged_through: string }>(
      'change-log-bounds',
      `SELECT COALESCE((SELECT max(seq) FROM changes), m.purged_through) AS latest, m.purged_through
       FROM change_log_meta m WHERE m.id = 1`,
      [],
    );
    const row = rows[0]!;
    return { latest: Number(row.latest), purgedThrough: Number(row.purged_through) };
  }

  async changesSince(after: number, limit: number): Promise<Change[]> {
    const rows = await this.#query<{ seq: string; kind: ChangeKind; message: string }>(
      'changes-since',
      'SELECT seq, kind, message FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2',
      [after, limit],
    );
    return rows.map((row) => ({
      seq: Number(row.seq),
      kind: row.kind,
      message: JSON.parse(row.message) as Message,
    }));
  }

  claimIdempotencyKey(claim: IdempotencyClaim, timing: ClaimTiming): Promise<ClaimOutcome> {
    return this.#transaction(async (client): Promise<ClaimOutcome> => {
      const now = timing.now.toISOString();
      const inserted = await client.query({
        name: 'insert-claim',
        text: `INSERT INTO idempotency_keys (scope, key, request_hash, token, state, claimed_at)
               VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT DO NOTHING`,
        values: [claim.scope, claim.key, claim.requestHash, claim.token, now],
      });
      if (inserted.rowCount === 1) return { kind: 'claimed' };
      // Milliseconds as a float8 (exact below 2^53): node-postgres gives a bigint as text.
      const { rows } = await client.query<StoredClaim>({
        name: 'lock-claim',
        text: `SELECT request_hash AS "requestHash", state, status, response,
                 round(extract(epoch FROM claimed_at) * 1000)::float8 AS "claimedAtMs"
               FROM idempotency_keys WHERE scope = $1 AND key = $2 FOR UPDATE`,
        values: [claim.scope, claim.key],
      });
      const outcome = decideClaim(rows[0], claim.requestHash, timing);
      if (outcome.kind === 'claimed') {
        await client.query({
          name: 'take-over-claim',
          text: `INSERT INTO idempotency_keys (scope, key, request_hash, token, state, claimed_at)
                 VALUES ($1, $2, $3, $4, 'pending', $5)
                 ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
                   token = EXCLUDED.token, state = 'pending', status = NULL, response = NULL,
                   claimed_at = EXCLUDED.claimed_at`,
          values: [claim.scope, claim.key, claim.requestHash, claim.token, now],
        });
      }
      return outcome;
    });
  }

  async completeIdempotencyKey(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    await this.#query(
      'complete-claim',
      `UPDATE idempotency_keys SET state = 'done', status = $4, response = $5
       WHERE scope = $1 AND key = $2 AND token = $3`,
      [claim.scope, claim.key, claim.token, response.status, response.body],
    );
  }

  async releaseIdempotencyKey(claim: IdempotencyClaim): Promise<void> {
    await this.#query(
      'release-claim',
      `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3 AND state = 'pending'`,
      [claim.scope, claim.key, claim.token],
    );
  }

  async purge(changesBefore: Date, idempotencyBefore: Date): Promise<void> {
    await this.#transaction(async (client) => {
      // The newest change is always kept, so the latest sequence survives any purge.
      const { rows } = await client.query<{ through: string | null }>(
        `SELECT max(seq) AS through FROM changes
         WHERE created_at < $1 AND seq < (SELECT max(seq) FROM changes)`,
        [changesBefore.toISOString()],
      );
      const through = rows[0]?.through ?? null;
      if (through !== null) {
        await client.query('DELETE FROM changes WHERE seq <= $1', [through]);
        await client.query(
          'UPDATE change_log_meta SET purged_through = GREATEST(purged_through, $1) WHERE id = 1',
          [through],
        );
      }
      await client.query('DELETE FROM idempotency_keys WHERE claimed_at < $1', [
        idempotencyBefore.toISOString(),
      ]);
    });
  }

  async ping(): Promise<void> {
    if (!this.#migrated) {
      throw new AppError(ErrorKinds.storeUnavailable, 'Migrations are not applied yet.');
    }
    await this.#query('ping', 'SELECT 1', []);
  }

  /**
   * Calls `wake` whenever any instance commits a change (LISTEN on a dedicated
   * connection outside the pool), and after every reconnect, since
   * notifications sent while disconnected are lost: the log is the truth.
   */
  watchChanges(wake: () => void): () => Promise<void> {
    const listener = new ChangeListener({
      config: this.#config,
      channel: 'message_changes',
      prefix: `${this.#schema ?? 'public'}:`,
      wake,
      onError: this.#onBackgroundError,
    });
    this.#listeners.add(listener);
    listener.start();
    return async () => {
      this.#listeners.delete(listener);
      await listener.stop();
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#listeners].map((l) => l.stop()));
    // A second close (a second signal during shutdown) is a no-op, as on SQLite.
    if (!this.#pool.ended) await this.#pool.end();
  }

  async #lockMessage(client: pg.PoolClient, id: string): Promise<Message | undefined> {
    const { rows } = await client.query<Message>({
      name: 'lock-message',
      text: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1 FOR UPDATE`,
      values: [id],
    });
    return rows[0];
  }

  async #appendChange(
    client: pg.PoolClient,
    kind: ChangeKind,
    room: string,
    json: string,
  ): Promise<void> {
    await client.query({
      name: 'append-change',
      text: 'SELECT append_change($1, $2, $3)',
      values: [kind, room, json],
    });
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
    return this.#withDeadline(async () => {
      try {
        const result = await this.#pool.query<R>({ name, text, values });
        return result.rows;
      } catch (error) {
        throw toStoreError(error);
      }
    });
  }

  /**
   * One store operation answers within the store timeout, whole: waiting for
   * a pool connection and each query have their own timeouts, but in a row
   * they could add up. The late operation still ends by itself; a write that
   * commits after its 503 is allowed (it happened fully), and a create whose
   * claim was freed meanwhile rolls back (see the create_message function).
   */
  #withDeadline<T>(operation: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(unavailable(new Error('store operation timed out'))),
        this.#timeoutMs,
      );
    });
    return Promise.race([operation(), deadline]).finally(() => clearTimeout(timer));
  }

  #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.#withDeadline(() => this.#runTransaction(work));
  }

  async #runTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    let broken: Error | undefined;
    // While a client is checked out the pool does not listen for its errors: a database that
    // goes away between two queries would otherwise be an uncaught 'error' that ends the process.
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A lost or stuck connection cannot roll back (a ROLLBACK would wait out another
      // timeout behind the stuck query): drop it, and the server rolls back instead.
      if (broken === undefined && isConnectionLost(error)) broken = error as Error;
      if (broken === undefined) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError as Error;
        }
      }
      throw toStoreError(error);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }
}
