/**
 * Retried creates: the rules of `Idempotency-Key`. The store keeps the
 * outcomes (so they survive restarts and hold across instances); this module
 * decides what a claim means and how long it lives.
 */
import { createHash, randomUUID } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { ClaimOutcome, IdempotencyClaim, IdempotencyStore } from './idempotency-store.ts';

/** A claim left by a process that died is free again after this long. */
export const IN_FLIGHT_CLAIM_MS = 30_000;

/** The first retry of a release that failed (the store was down); later ones back off. */
const RELEASE_RETRY_MS = 500;

/** 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export class IdempotencyService {
  readonly #store: IdempotencyStore;
  readonly #now: () => Date;
  readonly #ttlMs: number;

  constructor(store: IdempotencyStore, now: () => Date, ttlHours: number) {
    this.#store = store;
    this.#now = now;
    this.#ttlMs = ttlHours * 3_600_000;
  }

  /** Claims `key` for a request with this body (compared as parsed JSON). */
  async claim(
    scope: string,
    key: string,
    body: unknown,
  ): Promise<{ claim: IdempotencyClaim; outcome: ClaimOutcome }> {
    const requestHash = createHash('sha256').update(stableStringify(body)).digest('base64url');
    const claim: IdempotencyClaim = { scope, key, requestHash, token: randomUUID() };
    try {
      const outcome = await this.#store.claim(claim, {
        now: this.#now(),
        inFlightMs: IN_FLIGHT_CLAIM_MS,
        ttlMs: this.#ttlMs,
      });
      return { claim, outcome };
    } catch (error) {
      // No answer is not no claim: a claim whose commit timed out may still land later, and
      // would hold the key until it expired. The token is this request's alone, so freeing
      // it later never frees anyone else's claim.
      this.#releaseInBackground(claim, true);
      throw error;
    }
  }

  /** Keeps a 4xx outcome; if that fails the request ends in a 5xx, which frees the key. */
  async complete(claim: IdempotencyClaim, status: number, body: string): Promise<void> {
    try {
      await this.#store.complete(claim, { status, body });
    } catch (error) {
      this.#releaseInBackground(claim, false);
      throw error;
    }
  }

  /**
   * Frees the key after a 5xx, so the client's retry runs again. The 5xx is
   * often the store being down, and then so is this: keep trying in the
   * background, or a retry would get 409 until the claim expired.
   */
  async release(claim: IdempotencyClaim): Promise<void> {
    try {
      await this.#store.release(claim);
    } catch (error) {
      this.#releaseInBackground(claim, false);
      throw error;
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
