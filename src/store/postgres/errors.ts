/** Turns node-postgres errors into catalogued errors before they leave the engine folder. */
import { isAppError } from '../../errors.ts';
import { claimLost } from '../../domain/idempotency.ts';
import { replyTargetError } from '../../domain/message-writes.ts';
import { storeFull, storeUnavailable } from '../../domain/store-errors.ts';

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '57014', // query_canceled (statement_timeout)
  // read_only_sql_transaction: a standby, or a primary turned read-only (a failover under
  // way); reads go on, writes wait for a primary that takes them.
  '25006',
]);

const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|connection is closed|Cannot use a pool after calling end/i;

const CONNECTION_LOST_CODES = new Set(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02']);
const CONNECTION_LOST_MESSAGES =
  /Connection terminated|Query read timeout|Client has encountered a connection error|connection is closed|not queryable/i;

/**
 * The connection itself is gone or stuck (a query on it timed out and is
 * still running): it cannot even roll back, so it must be dropped, and the
 * server rolls back when the socket closes.
 */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_LOST_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  return CONNECTION_LOST_MESSAGES.test(error.message);
}

/** A store operation that did not answer within the store timeout (the cause of its 503). */
export class StoreTimeout extends Error {
  constructor() {
    super('store operation timed out');
  }
}

/** The store did not answer in time: the deadline, or node-postgres' query timeout. */
export function isStoreTimeout(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (e instanceof StoreTimeout || /Query read timeout/.test(e.message)) return true;
  }
  return false;
}

/** Raised by create_messages() when a create's Idempotency-Key claim was freed or taken over. */
export const CLAIM_LOST = 'MS001';

/** Raised by create_messages() when a reply's message is not a stored message of its room. */
export const REPLY_TARGET = 'MS002';

/**
 * Raised by create_messages() when a row's reader may not read its room at
 * commit; the store names the room (room-gate.ts privateRoom).
 */
export const PRIVATE_ROOM = 'MS003';

/** The error, or the first one it was caused by, that has this SQLSTATE (or one that `code` accepts). */
export function coded(
  error: unknown,
  code: string | ((code: string) => boolean),
): Error | undefined {
  const accepts = typeof code === 'string' ? (c: string) => c === code : code;
  for (let e = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    const found = (e as { code?: unknown }).code;
    if (typeof found === 'string' && accepts(found)) return e;
  }
  return undefined;
}

/** Whether the error, or one it was caused by, has this SQLSTATE (or one that `code` accepts). */
export function hasCode(error: unknown, code: string | ((code: string) => boolean)): boolean {
  return coded(error, code) !== undefined;
}

export function toStoreError(error: unknown): unknown {
  if (isAppError(error) || !(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  // Nothing was stored; the retry (which freed or took over the claim) decides.
  if (code === CLAIM_LOST) return claimLost(error);
  if (code === REPLY_TARGET) return replyTargetError(error);
  if (code === '53100') return storeFull(error);
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
    return storeUnavailable(error);
  }
  if (UNAVAILABLE_MESSAGES.test(error.message)) return storeUnavailable(error);
  return error;
}
