/**
 * Per-client caps on responses that stay open (event streams, streamed
 * lists): one client holds at most `max` of them at once, so it cannot take
 * the instance's whole share. The client is the rate limiter's: the token's
 * subject when auth is on, else the address. Past the cap: a 429 problem with
 * Retry-After and the draft's RateLimit headers for a concurrency quota.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorKinds } from '../errors.ts';
import { clientKey } from './rate-limit.ts';

export interface ClientSlotsOptions {
  /** The policy name in RateLimit-Policy / RateLimit. */
  readonly name: string;
  /** What a slot holds, for the problem's detail ("open event streams"). */
  readonly what: string;
  readonly max: number;
  /** Retry-After (seconds) for a client over its cap. */
  readonly retryAfterSeconds: number;
}

export class ClientSlots {
  readonly #o: ClientSlotsOptions;
  readonly #held = new Map<string, number>();

  constructor(options: ClientSlotsOptions) {
    this.#o = options;
  }

  /**
   * Takes a slot for the request's client, or throws the 429 when it holds
   * them all. The returned function gives the slot back; calls after the first do nothing.
   */
  take(request: FastifyRequest, reply: FastifyReply): () => void {
    const client = clientKey(request);
    const held = this.#held.get(client) ?? 0;
    if (held >= this.#o.max) throw this.#overCap(reply);
    this.#held.set(client, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(client) ?? 1) - 1;
      if (left > 0) this.#held.set(client, left);
      else this.#held.delete(client);
    };
  }

  #overCap(reply: FastifyReply): AppError {
    const { name, what, max, retryAfterSeconds } = this.#o;
    // Both fields are lists: the request budgets' items (set by the rate limiter) stay.
    const append = (field: string, item: string) => {
      const current = reply.getHeader(field);
      return current === undefined ? item : `${String(current)}, ${item}`;
    };
    return new AppError(
      ErrorKinds.rateLimited,
      `Too many ${what} for one client (${max}); close one or retry later.`,
      {
        headers: {
          'ratelimit-policy': append('ratelimit-policy', `"${name}";q=${max};qu="concurrency"`),
          ratelimit: append('ratelimit', `"${name}";r=0`),
          'retry-after': String(retryAfterSeconds),
        },
      },
    );
  }
}
