/** The RFC 9457 problem document: its schema (for OpenAPI) and how any error becomes one. */
import { Type, type Static } from '@sinclair/typebox';
import { AppError, ErrorKinds, isAppError, type FieldError } from '../errors.ts';
import { shorten } from './shorten.ts';
import { fieldErrorsFrom, type ValidationFailure } from './validation.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * What one problem document says at most, whatever the request: a body of
 * thousands of unknown fields must not get an answer of hundreds of KB (nor
 * have one kept for its Idempotency-Key). With these a problem stays under
 * about 7 KB.
 */
export const MAX_LISTED_ERRORS = 20;
const MAX_DETAIL_CHARS = 500;
const MAX_ENTRY_DETAIL_CHARS = 200;
const MAX_LOCATION_CHARS = 128;

/** One failed rule of a validation problem. */
export const FieldErrorSchema = Type.Object(
  {
    detail: Type.String(),
    pointer: Type.Optional(
      Type.String({ description: 'JSON Pointer into the body, e.g. #/content' }),
    ),
    parameter: Type.Optional(Type.String({ description: 'A query parameter name' })),
    header: Type.Optional(Type.String({ description: 'A request header name' })),
  },
  { $id: 'FieldError', description: 'One failed rule: its detail and where it failed.' },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String({
      description: 'Stable URI reference naming the kind of problem.',
      enum: Object.values(ErrorKinds).map((k) => k.type),
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'Identifies this occurrence: the request id.' }),
    errors: Type.Optional(
      Type.Array(FieldErrorSchema, {
        description: `One entry per failed rule; each names exactly one of pointer, parameter, header. At most ${MAX_LISTED_ERRORS} are listed (detail then says how many more failed); long names and details are shortened with "…".`,
      }),
    ),
  },
  { $id: 'Problem', description: 'An RFC 9457 problem.' },
);
export type Problem = Static<typeof ProblemSchema>;

interface FrameworkError {
  code?: string;
  statusCode?: number;
  validation?: ValidationFailure[];
  validationContext?: string;
}

/** Whatever was thrown, the AppError it stands for. Unknown errors become a 500 that says nothing internal. */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const e = (error ?? {}) as FrameworkError;
  if (Array.isArray(e.validation)) {
    return validationFailed(fieldErrorsFrom(e.validation, e.validationContext ?? 'body'));
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(ErrorKinds.payloadTooLarge, 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(ErrorKinds.unsupportedMediaType, 'Send the body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError(ErrorKinds.malformedBody, 'The body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError(ErrorKinds.malformedBody, 'The request body does not match its headers.');
    case 'FST_STATIC_FORBIDDEN_PATH':
      // A static path that climbs out of its folder (`/docs/static/../..`): nothing is there.
      return new AppError(ErrorKinds.notFound, 'No such path.');
    default:
  }
  const status = e.statusCode;
  if (status === 413) return new AppError(ErrorKinds.payloadTooLarge, 'The request is too large.');
  if (status === 415)
    return new AppError(ErrorKinds.unsupportedMediaType, 'Unsupported media type.');
  if (status === 400) return new AppError(ErrorKinds.malformedBody, 'The request is malformed.');
  // The static files (page, /docs assets) answer conditional and range requests themselves.
  if (status === 403 || status === 404) return new AppError(ErrorKinds.notFound, 'No such path.');
  if (status === 412) {
    return new AppError(
      ErrorKinds.preconditionFailed,
      'The precondition does not hold for this file.',
    );
  }
  if (status === 416) {
    return new AppError(ErrorKinds.rangeNotSatisfiable, 'The requested range is not in this file.');
  }
  if (status === 503) {
    return new AppError(
      ErrorKinds.storeUnavailable,
      'The service is shutting down or overloaded.',
      {
        headers: { 'retry-after': '1' },
      },
    );
  }
  return new AppError(ErrorKinds.internal, 'An unexpected error occurred; it has been logged.', {
    cause: error,
  });
}

/** The 400 for failed rules, one entry each; its detail sums up the first ones. */
export function validationFailed(errors: readonly FieldError[]): AppError {
  const detail = errors
    .slice(0, MAX_LISTED_ERRORS)
    .map((x) => x.detail)
    .join('; ');
  return new AppError(ErrorKinds.validation, detail, { errors });
}

/**
 * A schema validation failure (the framework's) with more failed rules of the
 * same request added, so that one 400 names them all; a rule at a location
 * the schema already flagged is left out.
 */
export function withMoreFailures(error: unknown, more: readonly FieldError[]): AppError {
  const appError = toAppError(error);
  if (appError.kind !== ErrorKinds.validation || more.length === 0) return appError;
  const errors = appError.errors ?? [];
  const flagged = new Set(errors.map(locationOf));
  return validationFailed([...errors, ...more.filter((e) => !flagged.has(locationOf(e)))]);
}

function locationOf(error: FieldError): string {
  if ('pointer' in error) return `pointer ${error.pointer}`;
  if ('parameter' in error) return `parameter ${error.parameter}`;
  return `header ${error.header}`;
}

function boundedEntry(error: FieldError): FieldError {
  const detail = shorten(error.detail, MAX_ENTRY_DETAIL_CHARS);
  if ('pointer' in error) return { pointer: shorten(error.pointer, MAX_LOCATION_CHARS), detail };
  if ('parameter' in error) {
    return { parameter: shorten(error.parameter, MAX_LOCATION_CHARS), detail };
  }
  return { header: shorten(error.header, MAX_LOCATION_CHARS), detail };
}

/** The document for an error, within the bounds above. */
export function problemBody(error: AppError, requestId: string): Problem {
  const listed = error.errors?.slice(0, MAX_LISTED_ERRORS).map(boundedEntry);
  const unlisted = (error.errors?.length ?? 0) - (listed?.length ?? 0);
  const detail = shorten(error.detail, MAX_DETAIL_CHARS);
  return {
    type: error.kind.type,
    title: error.kind.title,
    status: error.kind.status,
    detail: unlisted > 0 ? `${detail} (and ${unlisted} more failures, not listed)` : detail,
    instance: `urn:request:${requestId}`,
    ...(listed === undefined ? {} : { errors: listed }),
  };
}
