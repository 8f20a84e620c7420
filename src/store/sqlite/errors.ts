/** Turns better-sqlite3 errors into catalogued errors before they leave the engine folder. */
import { SqliteError } from 'better-sqlite3';
import { isAppError } from '../../errors.ts';
import { storeFull, storeUnavailable } from '../../domain/store-errors.ts';

const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|READONLY|PROTOCOL|NOLFS)/;

export function toStoreError(error: unknown): unknown {
  if (isAppError(error) || !(error instanceof SqliteError)) return error;
  if (error.code === 'SQLITE_FULL') return storeFull(error);
  if (UNAVAILABLE.test(error.code)) return storeUnavailable(error);
  return error;
}

/** Another connection holds the lock asked for (SQLITE_BUSY, or one of its extended codes). */
export function isBusy(error: unknown): boolean {
  return error instanceof SqliteError && error.code.startsWith('SQLITE_BUSY');
}
