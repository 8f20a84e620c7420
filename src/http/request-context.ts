/** What the HTTP layer attaches to a request: who is asking, and the Idempotency-Key claim. */
import type { Actor } from '../messages/actor.ts';
import type { IdempotencyClaim } from '../messages/idempotency-store.ts';

export interface IdempotencyState {
  readonly claim: IdempotencyClaim;
  /** True once the outcome is stored (a create stores its 201 in its own transaction). */
  settled: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by authentication when it is on; null means auth is off (no ownership rules). */
    actor: Actor | null;
    idempotency: IdempotencyState | null;
  }
}
