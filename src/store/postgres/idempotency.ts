/** Idempotency-Key claims and outcomes on PostgreSQL: a claim is decided under a row lock. */
import type {
  ClaimOutcome,
  ClaimTiming,
  IdempotencyClaim,
  IdempotencyStore,
  StoredResponse,
} from '../../messages/idempotency-store.ts';
import type { PostgresSession } from './postgres-store.ts';

export class PostgresIdempotency implements IdempotencyStore {
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
      const { rows } = await client.query<{
        request_hash: string;
        state: 'pending' | 'done';
        status: number | null;
        response: string | null;
        claimed_ms: string;
      }>({
        name: 'lock-claim',
        text: `SELECT request_hash, state, status, response,
                 (extract(epoch FROM claimed_at) * 1000)::bigint AS claimed_ms
               FROM idempotency_keys WHERE scope = $1 AND key = $2 FOR UPDATE`,
        values: [claim.scope, claim.key],
      });
      const row = rows[0];
      const claimedMs = row === undefined ? 0 : Number(row.claimed_ms);
      const nowMs = timing.now.getTime();
      const expired =
        row === undefined ||
        (row.state === 'pending'
          ? claimedMs + timing.inFlightMs <= nowMs
          : claimedMs + timing.ttlMs <= nowMs);
      if (expired) {
        await client.query({
          name: 'take-over-claim',
          text: `INSERT INTO idempotency_keys (scope, key, request_hash, token, state, claimed_at)
                 VALUES ($1, $2, $3, $4, 'pending', $5)
                 ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
                   token = EXCLUDED.token, state = 'pending', status = NULL, response = NULL,
                   claimed_at = EXCLUDED.claimed_at`,
          values: [claim.scope, claim.key, claim.requestHash, claim.token, now],
        });
        return { kind: 'claimed' };
      }
      if (row.state === 'pending') return { kind: 'in-flight' };
      if (row.request_hash !== claim.requestHash) return { kind: 'mismatch' };
      return { kind: 'replay', status: row.status ?? 500, body: row.response ?? '' };
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
