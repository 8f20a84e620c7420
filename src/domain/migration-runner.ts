/**
 * Versioned schema upgrades, run the same way on every engine: under the
 * engine's migration lock (if it has one: SQLite's instead looks again
 * inside each migration's write transaction), each migration not yet
 * applied, in version order, each in a transaction of its own together with
 * its record. An engine
 * supplies the three steps (its migrations.ts); a released migration never
 * changes, new ones are appended.
 */

export interface Migration {
  readonly version: number;
  readonly name: string;
  /** The engine's own SQL. */
  readonly sql: string;
}

/** What the runner needs of an engine (whose migrations may carry more than SQL: `M`). */
export interface MigrationTarget<M extends Migration = Migration> {
  /** Runs `work` holding the migration lock: instances that start together migrate one at a time. */
  withLock(work: () => Promise<void>): Promise<void>;
  /** The versions applied so far (making the table that records them, if need be). */
  appliedVersions(): Promise<readonly number[]> | readonly number[];
  /** Applies one migration and records its version, in one transaction: all or nothing. */
  apply(migration: M): Promise<void> | void;
}

/** Applies every migration not applied yet; a second call (or another instance) finds nothing to do. */
export async function runMigrations<M extends Migration>(
  target: MigrationTarget<M>,
  migrations: readonly M[],
): Promise<void> {
  migrations.forEach((migration, i) => {
    if (i > 0 && migration.version <= migrations[i - 1]!.version) {
      throw new Error(`migration ${migration.version} is out of order: versions must increase`);
    }
  });
  await target.withLock(async () => {
    const applied = new Set(await target.appliedVersions());
    for (const migration of migrations) {
      if (!applied.has(migration.version)) await target.apply(migration);
    }
  });
}
