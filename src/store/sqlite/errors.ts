/** Turns better-sqlite3 errors into catalogued errors before they leave the engine folder. */
import { SqliteError } from 'better-sqlite3';
import { isAppError } from '../../errors.ts';
import { storeFull, storeUnavailable } from '../../domain/store-errors.ts';

const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|READONLY|PROTOCOL|NOLFS)/;

/** The disk has no room for what the flush of the log had to write. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

export function toStoreError(error: unknown): unknown {
  if (isAppError(error)) return error;
  // The store's own file work outside SQLite (the log's fdatasync, wal-sync.ts) fails with a
  // system error: the commit is not known to be on disk, a 507 or a 503, never a 500.
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string') {
    return NO_SPACE.has(code ?? '') ? storeFull(error) : storeUnavailable(error);
  }
  if (!(error instanceof SqliteError)) return error;
  if (error.code === 'SQLITE_FULL') return storeFull(error);
  if (UNAVAILABLE.test(error.code)) return storeUnavailable(error);
  return error;
}

/** Another connection holds the lock asked for (SQLITE_BUSY, or one of its extended codes). */
export function isBusy(error: unknown): boolean {
  return error instanceof SqliteError && error.code.startsWith('SQLITE_BUSY');
}
