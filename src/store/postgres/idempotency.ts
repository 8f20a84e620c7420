/** Idempotency-Key claims and outcomes on PostgreSQL: a claim is decided under a row lock. */
import { decideClaim, type StoredClaim } from '../../domain/idempotency.ts';
import type {
  ClaimOutcome,
  ClaimTiming,
  IdempotencyClaim,
  IdempotencyStore,
  StoredResponse,
} from '../../domain/idempotency-store.ts';
import type { PostgresSession } from './postgres-store.ts';

export class PostgresIdempotency implements IdempotencyStore {
  readonly ownedByOneProcess = false;
  readonly #session: PostgresSession;

  constructor(session: PostgresSession) {
    this.#session = session;
  }

  claim(claim: IdempotencyClaim, timing: ClaimTiming): Promise<ClaimOutcome> {
    return this.#session.transaction(async (client): Promise<ClaimOutcome> => {
      const now = timing.now.toISOString();
      const inserted = await client.query({
        name: 'insert-claim',
        text: `INSERT INTO idempotency_keys (scope, key, request_hash, token, state, claimed_at)
               VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT DO NOTHING`,
        values: [claim.scope, claim.key, claim.requestHash, claim.token, now],
      });
      if (inserted.rowCount === 1) return { kind: 'claimed' };
      // Milliseconds as a float8 (exact below 2^53): node-postgres gives a bigint as text.
      const { rows } = await client.query<StoredClaim>({
        name: 'lock-claim',
        text: `SELECT request_hash AS "requestHash", state, status, response,
                 round(extract(epoch FROM claimed_at) * 1000)::float8 AS "claimedAtMs"
               FROM idempotency_keys WHERE scope = $1 AND key = $2 FOR UPDATE`,
        values: [claim.scope, claim.key],
      });
      const outcome = decideClaim(rows[0], claim.requestHash, timing);
      if (outcome.kind === 'claimed') {
        await client.query({
          name: 'take-over-claim',
          text: `INSERT INTO idempotency_keys (scope, key, request_hash, token, state, claimed_at)
                 VALUES ($1, $2, $3, $4, 'pending', $5)
                 ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
                   token = EXCLUDED.token, state = 'pending', status = NULL, response = NULL,
                   claimed_at = EXCLUDED.claimed_at`,
          values: [claim.scope, claim.key, claim.requestHash, claim.token, now],
        });
      }
      return outcome;
    });
  }

  async complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    await this.#session.query(
      'complete-claim',
      `UPDATE idempotency_keys SET state = 'done', status = $4, response = $5
       WHERE scope = $1 AND key = $2 AND token = $3`,
      [claim.scope, claim.key, claim.token, response.status, response.body],
    );
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    await this.#session.query(
      'release-claim',
      `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3 AND state = 'pending'`,
      [claim.scope, claim.key, claim.token],
    );
  }

  async purge(before: Date): Promise<void> {
    await this.#session.query(
      'purge-claims',
      'DELETE FROM idempotency_keys WHERE claimed_at < $1',
      [before.toISOString()],
    );
  }
}
