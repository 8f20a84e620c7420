/** Idempotency-Key claims and outcomes on SQLite: one table, every change through the group commit. */
import type { Statement } from 'better-sqlite3';
import { decideClaim, type StoredClaim } from '../../domain/idempotency.ts';
import type {
  ClaimOutcome,
  ClaimTiming,
  IdempotencyClaim,
  IdempotencyStore,
  StoredResponse,
} from '../../domain/idempotency-store.ts';
import type { SqliteSession } from './sqlite-store.ts';

export class SqliteIdempotency implements IdempotencyStore {
  readonly ownedByOneProcess = true;
  readonly #session: SqliteSession;
  readonly #get: Statement;
  readonly #upsert: Statement;
  readonly #complete: Statement;
  readonly #release: Statement;
  readonly #deleteOld: Statement;

  constructor(session: SqliteSession) {
    this.#session = session;
    const db = session.db;
    this.#get = db.prepare(
      `SELECT request_hash AS requestHash, state, status, response, claimed_at AS claimedAtMs
       FROM idempotency_keys WHERE scope = @scope AND key = @key`,
    );
    this.#upsert = db.prepare(
      `INSERT INTO idempotency_keys (scope, key, request_hash, token, state, status, response, claimed_at)
       VALUES (@scope, @key, @requestHash, @token, 'pending', NULL, NULL, @claimedAt)
       ON CONFLICT (scope, key) DO UPDATE SET request_hash = excluded.request_hash, token = excluded.token,
         state = 'pending', status = NULL, response = NULL, claimed_at = excluded.claimed_at`,
    );
    this.#complete = db.prepare(
      `UPDATE idempotency_keys SET state = 'done', status = @status, response = @response
       WHERE scope = @scope AND key = @key AND token = @token`,
    );
    this.#release = db.prepare(
      "DELETE FROM idempotency_keys WHERE scope = @scope AND key = @key AND token = @token AND state = 'pending'",
    );
    this.#deleteOld = db.prepare('DELETE FROM idempotency_keys WHERE claimed_at < ?');
  }

  claim(claim: IdempotencyClaim, timing: ClaimTiming): Promise<ClaimOutcome> {
    const now = timing.now.getTime();
    return this.#session.write((): ClaimOutcome => {
      const row = this.#get.get(claim) as StoredClaim | undefined;
      const outcome = decideClaim(row, claim.requestHash, timing);
      if (outcome.kind === 'claimed') this.#upsert.run({ ...claim, claimedAt: now });
      return outcome;
    });
  }

  async complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    await this.#session.write(() => this.completeWithin(claim, response.status, response.body));
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    await this.#session.write(() => this.#release.run(claim));
  }

  async purge(before: Date): Promise<void> {
    await this.#session.write(() => this.#deleteOld.run(before.getTime()));
  }

  /** Records the outcome inside a running write (a create's 201); false if the claim is not held. */
  completeWithin(claim: IdempotencyClaim, status: number, body: string): boolean {
    return this.#complete.run({ ...claim, status, response: body }).changes > 0;
  }
}
