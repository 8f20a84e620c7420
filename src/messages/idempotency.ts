/**
 * Retried creates: the rules of `Idempotency-Key`. The store keeps the
 * outcomes (so they survive restarts and hold across instances); this module
 * decides what a claim means and how long it lives.
 */
import { createHash, randomUUID } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { ClaimOutcome, IdempotencyClaim, MessageStore } from './message-store.ts';

/** A claim left by a process that died is free again after this long. */
export const IN_FLIGHT_CLAIM_MS = 30_000;

/** 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export class IdempotencyService {
  readonly #store: MessageStore;
  readonly #now: () => Date;
  readonly #ttlMs: number;

  constructor(store: MessageStore, now: () => Date, ttlHours: number) {
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
    const outcome = await this.#store.claimIdempotencyKey(claim, {
      now: this.#now(),
      inFlightMs: IN_FLIGHT_CLAIM_MS,
      ttlMs: this.#ttlMs,
    });
    return { claim, outcome };
  }

  complete(claim: IdempotencyClaim, status: number, body: string): Promise<void> {
    return this.#store.completeIdempotencyKey(claim, { status, body });
  }

  release(claim: IdempotencyClaim): Promise<void> {
    return this.#store.releaseIdempotencyKey(claim);
  }
}
