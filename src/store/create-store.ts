/** The single switch on DATABASE_URL: adding an engine is one folder plus one line here. */
import { sqliteInstanceWaitMs, type Config } from '../config.ts';
import type { Store } from '../domain/store.ts';
import { PostgresStore } from './postgres/postgres-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';

export interface StoreLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export function createStore(config: Config, log: StoreLogger): Store {
  const url = config.databaseUrl;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    return new SqliteStore({
      filename: file === ':memory:' ? ':memory:' : file,
      synchronous: config.sqliteSynchronous,
      batching: config.batching,
      instanceLock: {
        waitMs: sqliteInstanceWaitMs(config),
        onWait: (lockFile, waitMs) =>
          log.warn(
            { lockFile, waitMs },
            `waiting up to ${waitMs} ms for another process to let go of the SQLite file`,
          ),
      },
    });
  }
  return new PostgresStore({
    url,
    poolSize: config.pgPoolSize,
    timeoutMs: config.storeTimeoutMs,
    batching: config.batching,
    onBackgroundError: (err) => log.error({ err }, 'postgres background error'),
  });
}
