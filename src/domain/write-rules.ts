/**
 * The rules every conditional write shares, whatever the resource: fixed
 * fields (400), a stale `version` or `updatedAt` (409), If-Match (412).
 */
import { AppError, ErrorKinds, type FieldError } from '../errors.ts';

/** Evaluates If-Match against the current version; false means 412. */
export type VersionPrecondition = (currentVersion: number) => boolean;

/** Collects the fixed fields of a body that differ from the stored ones; `check` throws the 400. */
export class FixedFields {
  readonly #errors: FieldError[] = [];

  /** Notes `field` when it was sent and differs from the stored value. */
  compare(field: string, sent: unknown, stored: unknown, same = Object.is): this {
    if (sent !== undefined && !same(sent, stored)) {
      this.#errors.push({
        pointer: `#/${field}`,
        detail: `${field} differs from the stored value`,
      });
    }
    return this;
  }

  check(): void {
    if (this.#errors.length === 0) return;
    const names = this.#errors.map((e) => ('pointer' in e ? e.pointer.slice(2) : '')).join(', ');
    throw new AppError(ErrorKinds.fixedField, `Fixed fields cannot change: ${names}.`, {
      errors: this.#errors,
    });
  }
}

export function sameInstant(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' && Date.parse(a) === Date.parse(b);
}

/** A 409 when the body's `version` or `updatedAt` is not the current one. */
export function assertCurrent(
  what: string,
  current: { readonly version: number; readonly updatedAt?: string },
  body: { readonly version?: number; readonly updatedAt?: string },
): void {
  if (body.version !== undefined && body.version !== current.version) {
    throw new AppError(
      ErrorKinds.versionConflict,
      `The ${what} is at version ${current.version}, not ${body.version}: read it again.`,
    );
  }
  if (
    body.updatedAt !== undefined &&
    current.updatedAt !== undefined &&
    !sameInstant(body.updatedAt, current.updatedAt)
  ) {
    throw new AppError(
      ErrorKinds.versionConflict,
      `The ${what} was updated at ${current.updatedAt}, not ${body.updatedAt}: read it again.`,
    );
  }
}

/**
 * The `updatedAt` of a change made at `now` to what was last updated at
 * `previous`: `now`, or a millisecond after `previous` when the clock has not
 * passed it (two changes in one millisecond, a clock set back). A stale
 * `updatedAt` is a 409, so each change must leave a new one, or a client that
 * read the version before could overwrite this one unseen.
 */
export function nextUpdatedAt(previous: string, now: string): string {
  const before = Date.parse(previous);
  return Date.parse(now) > before ? now : new Date(before + 1).toISOString();
}

/** A 412 when the request's preconditions (If-Match, If-None-Match) do not hold for the current version. */
export function assertPrecondition(version: number, precondition?: VersionPrecondition): void {
  if (precondition !== undefined && !precondition(version)) {
    throw new AppError(
      ErrorKinds.preconditionFailed,
      `The request's If-Match or If-None-Match does not hold for the current ETag "${version}".`,
    );
  }
}
