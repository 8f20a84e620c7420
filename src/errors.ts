/**
 * The error catalog: every kind of problem the service can answer with.
 * Everything that fails on purpose throws an AppError; the HTTP layer turns it
 * into one RFC 9457 problem. This file imports nothing, so every layer may use it.
 */

export interface ErrorKind {
  /** Stable URI reference that names this kind of problem (RFC 9457 `type`). */
  readonly type: string;
  readonly status: number;
  readonly title: string;
}

function kind(slug: string, status: number, title: string): ErrorKind {
  return Object.freeze({ type: `/problems/${slug}`, status, title });
}

export const ErrorKinds = Object.freeze({
  malformedBody: kind('malformed-body', 400, 'Malformed request body'),
  malformedRequest: kind('malformed-request', 400, 'Malformed HTTP request'),
  validation: kind('validation', 400, 'Request validation failed'),
  fixedField: kind('fixed-field', 400, 'A fixed field differs from the stored value'),
  unauthorized: kind('unauthorized', 401, 'Authentication required'),
  forbidden: kind('forbidden', 403, 'Not allowed'),
  notFound: kind('not-found', 404, 'Not found'),
  methodNotAllowed: kind('method-not-allowed', 405, 'Method not allowed'),
  requestTimeout: kind('request-timeout', 408, 'The request took too long to arrive'),
  versionConflict: kind('version-conflict', 409, 'It changed since it was read'),
  lastOwner: kind('last-owner', 409, 'A room cannot lose its last owner'),
  tooManyEmoji: kind('too-many-emoji', 409, 'A message holds at most 20 different emoji'),
  idempotencyInFlight: kind(
    'idempotency-in-flight',
    409,
    'A request with this Idempotency-Key is still in flight',
  ),
  preconditionFailed: kind('precondition-failed', 412, 'Precondition failed'),
  payloadTooLarge: kind('payload-too-large', 413, 'Request body too large'),
  unsupportedMediaType: kind('unsupported-media-type', 415, 'Unsupported media type'),
  rangeNotSatisfiable: kind('range-not-satisfiable', 416, 'Range not satisfiable'),
  idempotencyKeyReuse: kind(
    'idempotency-key-reuse',
    422,
    'Idempotency-Key reused with a different body',
  ),
  rateLimited: kind('rate-limited', 429, 'Too many requests'),
  headersTooLarge: kind('headers-too-large', 431, 'Request header fields too large'),
  internal: kind('internal', 500, 'Internal server error'),
  storeUnavailable: kind('unavailable', 503, 'Service unavailable'),
  insufficientStorage: kind('insufficient-storage', 507, 'Insufficient storage'),
});

/** Where a validation failure sits: exactly one of pointer, parameter or header. */
export type FieldErrorLocation =
  { readonly pointer: string } | { readonly parameter: string } | { readonly header: string };

export type FieldError = { readonly detail: string } & FieldErrorLocation;

export interface AppErrorOptions {
  readonly errors?: readonly FieldError[];
  /** Response headers that belong to this problem (Allow, Retry-After, ...). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly detail: string;
  readonly errors: readonly FieldError[] | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(kind: ErrorKind, detail: string, options: AppErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return this.kind.status;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
