/**
 * The store engines every contract test runs against. Each call makes a
 * fresh, private database (a temp SQLite file, or a PostgreSQL schema of its
 * own) and a cleanup that removes it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PG_BASE_URL, postgresAvailable, skipUnless } from './prerequisites.ts';

export interface TestDatabase {
  /** A DATABASE_URL for this private database. */
  readonly url: string;
  cleanup(): Promise<void>;
}

export interface Engine {
  readonly name: 'sqlite' | 'postgres';
  /** false, or why this engine cannot run here. */
  unavailable(): Promise<string | false>;
  createDatabase(): Promise<TestDatabase>;
}

export const sqliteEngine: Engine = {
  name: 'sqlite',
  unavailable: async () => false,
  createDatabase: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'msg-test-'));
    return {
      url: `sqlite:${join(dir, 'messages.db')}`,
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

export const postgresEngine: Engine = {
  name: 'postgres',
  unavailable: async () => ((await postgresAvailable()) ? false : `PostgreSQL at ${PG_BASE_URL}`),
  createDatabase: async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const url = new URL(PG_BASE_URL);
    url.searchParams.set('schema', schema);
    return {
      url: url.toString(),
      cleanup: async () => {
        const client = new pg.Client({ connectionString: PG_BASE_URL });
        await client.connect();
        try {
          await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await client.end();
        }
      },
    };
  },
};

export const engines: readonly Engine[] = [sqliteEngine, postgresEngine];

/**
 * The skip option for tests on this engine: false when it can run, else the
 * reason, announced loudly. With CI=true an engine that cannot run throws
 * (see skipUnless): never pass an engine's unavailable() reason as a skip.
 */
export async function skipUnlessEngine(engine: Engine): Promise<string | false> {
  const reason = await engine.unavailable();
  return reason === false ? false : skipUnless(false, reason);
}
