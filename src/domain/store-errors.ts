/**
 * The catalogued errors a store answers with, whatever its engine: each
 * engine's errors.ts only decides which of its driver's errors is which.
 */
import { AppError, ErrorKinds } from '../errors.ts';

/** The store is down, busy or timed out: a 503 the client may retry shortly. */
export function storeUnavailable(cause?: unknown): AppError {
  return new AppError(ErrorKinds.storeUnavailable, 'The store is unavailable; try again shortly.', {
    headers: { 'retry-after': '1' },
    cause,
  });
}

/** The disk is full: a 507; reads go on. */
export function storeFull(cause: unknown): AppError {
  return new AppError(
    ErrorKinds.insufficientStorage,
    'The store is out of disk space; reads go on, writes resume when space is freed.',
    { cause },
  );
}

/** A store asked to answer before its migrations ran. */
export function notMigrated(): AppError {
  return new AppError(ErrorKinds.storeUnavailable, 'Migrations are not applied yet.');
}
