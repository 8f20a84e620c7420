/** What the HTTP layer attaches to a request: who is asking, and the Idempotency-Key claim. */
import type { Actor } from '../domain/actor.ts';
import type { HeldClaim } from '../domain/idempotency.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by authentication when it is on; null means auth is off (no ownership rules). */
    actor: Actor | null;
    /** The Idempotency-Key claim this request holds, if it sent a key (see idempotency-key.ts). */
    idempotency: HeldClaim | null;
    /** The URL carried `access_token` (see url-tokens.ts): the answer must not be cached by others. */
    tokenInUrl: boolean;
  }
}
