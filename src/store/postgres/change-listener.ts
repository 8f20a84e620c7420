/**
 * LISTEN on one dedicated connection (outside the pool, so a busy pool never
 * delays a wake-up). A notification only says "the log moved"; the log is the
 * truth, so after every (re)connect the listener wakes its owner once to
 * re-read whatever it missed while disconnected. A connection that dies
 * silently (a half-open TCP connection delivers no error) is found by a
 * periodic query and replaced.
 */
import pg from 'pg';

export interface ChangeListenerOptions {
  readonly config: pg.ClientConfig;
  readonly channel: string;
  /** Only payloads starting with this (the schema) are ours. */
  readonly prefix: string;
  readonly wake: () => void;
  readonly onError: (error: Error) => void;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;
/** How often the connection is checked, and how long the check may take. */
const CHECK_EVERY_MS = 30_000;
const CHECK_TIMEOUT_MS = 10_000;

export class ChangeListener {
  readonly #options: ChangeListenerOptions;
  #client: pg.Client | undefined;
  #stopped = false;
  #retryMs = RETRY_MIN_MS;
  #retryTimer: NodeJS.Timeout | undefined;
  #checkTimer: NodeJS.Timeout | undefined;

  constructor(options: ChangeListenerOptions) {
    this.#options = options;
  }

  start(): void {
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    clearInterval(this.#checkTimer);
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await client.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const client = new pg.Client({
      ...this.#options.config,
      query_timeout: undefined,
      // Names this connection in pg_stat_activity (operators, and the reconnect test).
      application_name: `message-service listen ${this.#options.prefix.slice(0, -1)}`.slice(0, 63),
    });
    this.#client = client;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      clearInterval(this.#checkTimer);
      if (!this.#stopped) this.#options.onError(error);
      client.end().catch(() => undefined);
      if (this.#client === client) this.#client = undefined;
      this.#scheduleReconnect();
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('change listener connection ended')));
    client.on('notification', (message) => {
      if (message.payload?.startsWith(this.#options.prefix)) this.#options.wake();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#options.channel}`);
      if (this.#stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.#retryMs = RETRY_MIN_MS;
      this.#checkTimer = setInterval(() => this.#check(client, fail), CHECK_EVERY_MS);
      this.#checkTimer.unref();
      // Whatever was committed while we were not listening is in the log: read it now.
      this.#options.wake();
    } catch (error) {
      fail(error as Error);
    }
  }

  #check(client: pg.Client, fail: (error: Error) => void): void {
    const timeout = setTimeout(
      () => fail(new Error('change listener connection stopped answering')),
      CHECK_TIMEOUT_MS,
    );
    client
      .query('SELECT 1')
      .then(() => clearTimeout(timeout))
      .catch((error: Error) => {
        clearTimeout(timeout);
        fail(error);
      });
  }

  #scheduleReconnect(): void {
    if (this.#stopped) return;
    this.#retryTimer = setTimeout(() => void this.#connect(), this.#retryMs);
    this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
  }
}
