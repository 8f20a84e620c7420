/** Turns better-sqlite3 errors into catalogued errors before they leave the engine folder. */
import { SqliteError } from 'better-sqlite3';
import { AppError, ErrorKinds, isAppError } from '../../errors.ts';

const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|READONLY|PROTOCOL|NOLFS)/;

export function toStoreError(error: unknown): unknown {
  if (isAppError(error) || !(error instanceof SqliteError)) return error;
  if (error.code === 'SQLITE_FULL') {
    return new AppError(
      ErrorKinds.insufficientStorage,
      'The store is out of disk space; reads go on, writes resume when space is freed.',
      { cause: error },
    );
  }
  if (UNAVAILABLE.test(error.code)) {
    return new AppError(
      ErrorKinds.storeUnavailable,
      'The store is unavailable; try again shortly.',
      {
        headers: { 'retry-after': '1' },
        cause: error,
      },
    );
  }
  return error;
}
