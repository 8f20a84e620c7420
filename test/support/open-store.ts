/** A store on a private, freshly migrated database, for the store-level suites. */
import { defaultConfig, type Config } from '../../src/config.ts';
import type { Store } from '../../src/domain/store.ts';
import { createStore } from '../../src/store/create-store.ts';
import type { Engine, TestDatabase } from './engines.ts';

/** A store logger that says nothing. */
export const silent = { error: () => undefined, warn: () => undefined };

export function openStoreWith(url: string, settings: Partial<Config>): Store {
  return createStore(defaultConfig({ ...settings, databaseUrl: url, logLevel: 'silent' }), silent);
}

export async function withStore(
  engine: Engine,
  settings: Partial<Config>,
  fn: (store: Store, db: TestDatabase) => Promise<void>,
): Promise<void> {
  const db = await engine.createDatabase();
  const store = openStoreWith(db.url, settings);
  try {
    await store.migrate();
    await fn(store, db);
  } finally {
    await store.close();
    await db.cleanup();
  }
}

/** A private database at the latest schema, with no store left open on it (for raw-SQL checks). */
export async function migratedDatabase(engine: Engine): Promise<TestDatabase> {
  const db = await engine.createDatabase();
  const store = openStoreWith(db.url, {});
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
  return db;
}
