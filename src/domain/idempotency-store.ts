/**
 * Idempotency-Key outcomes as an engine keeps them, so they survive restarts
 * and hold across instances. The rules around them (hashing, timings,
 * retries of a release) are idempotency.ts's.
 */

export interface IdempotencyClaim {
  /** The token's subject when auth is on, '' otherwise. */
  readonly scope: string;
  readonly key: string;
  /** Hash of the request body as parsed JSON (canonical form). */
  readonly requestHash: string;
  /** Identifies this claim, so a claim taken over after expiry cannot be completed by its old owner. */
  readonly token: string;
}

export type ClaimOutcome =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'replay'; readonly status: number; readonly body: string }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in-flight' };

export interface StoredResponse {
  readonly status: number;
  /** The response body as sent, JSON text. */
  readonly body: string;
}

export interface ClaimTiming {
  readonly now: Date;
  /** A pending claim older than this is abandoned (its process died) and may be taken over. */
  readonly inFlightMs: number;
  /** A completed outcome older than this is forgotten. */
  readonly ttlMs: number;
  /** A pending claim taken before this was left by a process that died (see ownedByOneProcess). */
  readonly abandonedBefore?: Date;
}

export interface IdempotencyStore {
  /** One process at a time owns the store (a SQLite file): what it left pending, it left by dying. */
  readonly ownedByOneProcess: boolean;

  /**
   * Reads the key's row and lets the domain's decideClaim() rule on it, in one
   * transaction; stores this claim (pending) when the answer is 'claimed'.
   * Of racing claims of a free (or expired) key exactly one is 'claimed'.
   */
  claim(claim: IdempotencyClaim, timing: ClaimTiming): Promise<ClaimOutcome>;

  /** Records a non-create outcome (a 4xx) for a claim; no effect unless this claim still holds the key. */
  complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void>;

  /** Frees a pending claim whose request failed with a 5xx, so a retry may run again; a kept outcome stays. */
  release(claim: IdempotencyClaim): Promise<void>;

  /** Forgets every claim and outcome claimed before `before`. */
  purge(before: Date): Promise<void>;
}
