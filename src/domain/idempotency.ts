/**
 * Retried creates: the whole life of an `Idempotency-Key`, in this one place.
 * The stores only keep rows (so outcomes survive restarts and hold across
 * instances); the HTTP side only calls one method per phase.
 *
 *   1. claim(key, body)     decideClaim() rules on the stored row, inside the
 *                           store's transaction: none or expired → held by
 *                           this request; pending → 409 in flight; another
 *                           body → 422; else the kept answer is replayed.
 *   2. the request runs     a create commits its 201 together with the claim
 *                           (and stores nothing if the claim is no longer
 *                           held: the stores throw claimLost(), a 503).
 *   3. settle(status, body) 2xx/4xx: keep the answer (a 201 is kept already);
 *                           one over MAX_KEPT_OUTCOME_BYTES is not kept, the
 *                           key is freed instead. 5xx: free the key, so the
 *                           retry runs again; a 503 waits for that at most
 *                           RELEASE_WAIT_MS (the store may be what hangs).
 *   4. abandon()            the request ended without an answer (the
 *                           connection dropped): free the key.
 *
 * A release that fails is retried in the background, backing off, until the
 * claim would have expired anyway. A pending claim expires after
 * IN_FLIGHT_CLAIM_MS (its process died), or at once if it is older than this
 * service on a store that one process owns (the process before this one left
 * it by dying); a kept answer expires after the TTL.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import stableStringify from 'fast-json-stable-stringify';
import { AppError, ErrorKinds } from '../errors.ts';
import type {
  ClaimOutcome,
  ClaimTiming,
  IdempotencyClaim,
  IdempotencyStore,
  StoredResponse,
} from './idempotency-store.ts';

/** A claim left by a process that died is free again after this long. */
export const IN_FLIGHT_CLAIM_MS = 30_000;

/** The first retry of a release that failed (the store was down); later ones back off. */
const RELEASE_RETRY_MS = 500;

/** How long a 503 waits for its key to be freed (a healthy store takes a millisecond). */
const RELEASE_WAIT_MS = 250;

/**
 * The most a kept 4xx answer may weigh. Problem documents are bounded far
 * below this (see the HTTP layer); anything larger is not kept, and its key
 * is freed: the retry runs again, which is safe, as a 4xx changed nothing.
 * (A 201 is bounded by the message's own field limits.)
 */
export const MAX_KEPT_OUTCOME_BYTES = 16 * 1024;

/** 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** An idempotency row as a store keeps it. */
export interface StoredClaim {
  readonly requestHash: string;
  readonly state: 'pending' | 'done';
  readonly status: number | null;
  readonly response: string | null;
  /** When it was claimed, in ms since the epoch. */
  readonly claimedAtMs: number;
}

/**
 * What a claim of `requestHash` meets in the stored row (undefined: none).
 * Pure: both stores call it inside the transaction that read the row, and
 * store this request's claim when the answer is 'claimed'.
 */
export function decideClaim(
  row: StoredClaim | undefined,
  requestHash: string,
  timing: ClaimTiming,
): ClaimOutcome {
  if (row === undefined || hasExpired(row, timing)) return { kind: 'claimed' };
  if (row.state === 'pending') return { kind: 'in-flight' };
  if (row.requestHash !== requestHash) return { kind: 'mismatch' };
  return { kind: 'replay', status: row.status ?? 500, body: row.response ?? '' };
}

function hasExpired(row: StoredClaim, timing: ClaimTiming): boolean {
  const now = timing.now.getTime();
  if (row.state === 'done') return row.claimedAtMs + timing.ttlMs <= now;
  const abandoned = timing.abandonedBefore;
  return (
    row.claimedAtMs + timing.inFlightMs <= now ||
    (abandoned !== undefined && row.claimedAtMs < abandoned.getTime())
  );
}

/** A create whose claim was freed or taken over meanwhile: it stored nothing; the client retries. */
export function claimLost(cause?: unknown): AppError {
  return new AppError(
    ErrorKinds.storeUnavailable,
    'The Idempotency-Key claim was lost before the create committed; nothing was stored, retry.',
    { headers: { 'retry-after': '1' }, cause },
  );
}

/** The body's fingerprint: compared as parsed JSON (canonical key order). */
function fingerprint(body: unknown): string {
  let canonical: string;
  try {
    canonical = stableStringify(body);
  } catch {
    // Too deep to walk (the body parser refuses such bodies first; this is the second wall).
    throw new AppError(ErrorKinds.malformedBody, 'The body nests too deeply.');
  }
  return createHash('sha256').update(canonical).digest('base64url');
}

/** A claim this request holds until it is settled or abandoned. */
export class HeldClaim {
  readonly claim: IdempotencyClaim;
  #open = true;

  constructor(claim: IdempotencyClaim) {
    this.claim = claim;
  }

  /** Nothing kept or freed yet. */
  get open(): boolean {
    return this.#open;
  }

  /** Closes it; true for the first caller only, who then owns what happens to the key. */
  close(): boolean {
    const was = this.#open;
    this.#open = false;
    return was;
  }
}

export type ClaimResult =
  | { readonly kind: 'held'; readonly held: HeldClaim }
  | { readonly kind: 'replay'; readonly response: StoredResponse };

export class IdempotencyService {
  readonly #store: IdempotencyStore;
  readonly #now: () => Date;
  readonly #ttlMs: number;
  /** Claims pending from before this are abandoned (only when one process owns the store). */
  readonly #startedAt: Date | undefined;

  constructor(store: IdempotencyStore, now: () => Date, ttlHours: number) {
    this.#store = store;
    this.#now = now;
    this.#ttlMs = ttlHours * 3_600_000;
    this.#startedAt = store.ownedByOneProcess ? now() : undefined;
  }

  /** Phase 1: claims `key` for a request with this body; 409 or 422 when it may not run. */
  async claim(scope: string, key: string, body: unknown): Promise<ClaimResult> {
    const claim: IdempotencyClaim = {
      scope,
      key,
      requestHash: fingerprint(body),
      token: randomUUID(),
    };
    let outcome: ClaimOutcome;
    try {
      outcome = await this.#store.claim(claim, {
        now: this.#now(),
        inFlightMs: IN_FLIGHT_CLAIM_MS,
        ttlMs: this.#ttlMs,
        ...(this.#startedAt === undefined ? {} : { abandonedBefore: this.#startedAt }),
      });
    } catch (error) {
      // No answer is not no claim: a claim whose commit timed out may still land later, and
      // would hold the key until it expired. The token is this request's alone, so freeing
      // it later never frees anyone else's claim.
      this.#releaseInBackground(claim, true);
      throw error;
    }
    switch (outcome.kind) {
      case 'claimed':
        return { kind: 'held', held: new HeldClaim(claim) };
      case 'replay':
        return { kind: 'replay', response: { status: outcome.status, body: outcome.body } };
      case 'in-flight':
        throw new AppError(
          ErrorKinds.idempotencyInFlight,
          'A request with this Idempotency-Key is still being processed; retry shortly.',
          { headers: { 'retry-after': '1' } },
        );
      case 'mismatch':
        throw new AppError(
          ErrorKinds.idempotencyKeyReuse,
          'This Idempotency-Key was used with a different body.',
        );
    }
  }

  /** Phase 3: the answer is known. Keeps a 2xx/4xx (within the size bound), frees the key after a 5xx. */
  async settle(held: HeldClaim, status: number, body: string): Promise<void> {
    if (!held.close()) return;
    if (status >= 500) {
      const released = this.#release(held.claim);
      await (status === 503
        ? Promise.race([released, sleep(RELEASE_WAIT_MS, undefined, { ref: false })])
        : released);
      return;
    }
    if (Buffer.byteLength(body) > MAX_KEPT_OUTCOME_BYTES) {
      await this.#release(held.claim);
      return;
    }
    try {
      await this.#store.complete(held.claim, { status, body });
    } catch (error) {
      // The request now ends in a 5xx, which frees the key: make sure it does.
      this.#releaseInBackground(held.claim, false);
      throw error;
    }
  }

  /** Phase 4: the request ended without an answer; its key is free again. */
  async abandon(held: HeldClaim): Promise<void> {
    if (held.close()) await this.#release(held.claim);
  }

  /**
   * Frees the key. After a 5xx the store is often down, and then so is this:
   * it keeps trying in the background, or a retry would get 409 until the
   * claim expired. Never throws.
   */
  async #release(claim: IdempotencyClaim): Promise<void> {
    try {
      await this.#store.release(claim);
    } catch {
      this.#releaseInBackground(claim, false);
    }
  }

  /**
   * Tries the release again, backing off, until the claim would have expired
   * anyway; `untilExpiry` keeps trying after a success too (for a claim that
   * may still commit late).
   */
  #releaseInBackground(
    claim: IdempotencyClaim,
    untilExpiry: boolean,
    delayMs = RELEASE_RETRY_MS,
    until = Date.now() + IN_FLIGHT_CLAIM_MS,
  ): void {
    if (Date.now() + delayMs >= until) return;
    const again = () => this.#releaseInBackground(claim, untilExpiry, delayMs * 2, until);
    setTimeout(() => {
      this.#store.release(claim).then(untilExpiry ? again : undefined, again);
    }, delayMs).unref();
  }
}
