/**
 * System prerequisites of some tests (PostgreSQL, Chromium, root). Outside CI
 * a missing one skips those tests with a loud message; with CI=true nothing
 * skips: a missing prerequisite fails the run.
 */
import { existsSync } from 'node:fs';
import pg from 'pg';

export const IN_CI = process.env.CI === 'true';
export const PG_BASE_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let pgAvailable: Promise<boolean> | undefined;

export function postgresAvailable(): Promise<boolean> {
  pgAvailable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_BASE_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return pgAvailable;
}

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

/**
 * Returns a reason to skip (string) or false. In CI a missing prerequisite
 * throws instead, so the run fails rather than passing by skipping.
 */
export function skipUnless(available: boolean, what: string): string | false {
  if (available) return false;
  const message = `${what} is not available`;
  if (IN_CI) throw new Error(`${message}, and CI=true forbids skipping`);
  process.stderr.write(`\n!!! SKIPPING: ${message} (set it up to run these tests) !!!\n\n`);
  return message;
}
