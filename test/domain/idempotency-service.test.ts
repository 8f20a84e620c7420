/**
 * The Idempotency-Key lifecycle of the domain (IdempotencyService) on a real
 * SQLite store: what it keeps, what it frees, and what it refuses to walk.
 * The HTTP behaviour is in test/http/idempotency-key.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultConfig } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';
import {
  IdempotencyService,
  MAX_KEPT_OUTCOME_BYTES,
  type ClaimResult,
  type HeldClaim,
} from '../../src/domain/idempotency.ts';
import type { Store } from '../../src/domain/store.ts';
import { createStore } from '../../src/store/create-store.ts';
import { sqliteEngine, type TestDatabase } from '../support/engines.ts';
import { silent } from '../support/open-store.ts';

const BODY = { author: 'ada', content: 'hi' };

function held(result: ClaimResult): HeldClaim {
  assert.equal(result.kind, 'held');
  return result.held;
}

describe('IdempotencyService', () => {
  let db: TestDatabase;
  let store: Store;
  let now = Date.parse('2026-11-21T10:00:00.000Z');
  const clock = () => new Date(now);

  before(async () => {
    db = await sqliteEngine.createDatabase();
    store = createStore(defaultConfig({ databaseUrl: db.url }), silent);
    await store.migrate();
  });
  after(async () => {
    await store.close();
    await db.cleanup();
  });

  it('keeps a 4xx answer and replays it; one heavier than the bound is not kept', async () => {
    const service = new IdempotencyService(store.idempotency, clock, 24);
    const small = '{"status":400}';
    await service.settle(held(await service.claim('', 'small', BODY)), 400, small);
    assert.deepEqual(await service.claim('', 'small', BODY), {
      kind: 'replay',
      response: { status: 400, body: small },
    });

    const heavy = `"${'x'.repeat(MAX_KEPT_OUTCOME_BYTES)}"`;
    await service.settle(held(await service.claim('', 'heavy', BODY)), 400, heavy);
    // Not kept, and the key is free: the retry runs again.
    held(await service.claim('', 'heavy', BODY));
  });

  it('frees the key after a 5xx, and after a request that ended without an answer', async () => {
    const service = new IdempotencyService(store.idempotency, clock, 24);
    await service.settle(held(await service.claim('', 'five', BODY)), 500, '{}');
    const again = held(await service.claim('', 'five', BODY));
    await service.abandon(again);
    held(await service.claim('', 'five', BODY));
  });

  it('refuses a body too deep to fingerprint with a 400, never a RangeError', async () => {
    const service = new IdempotencyService(store.idempotency, clock, 24);
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    await assert.rejects(
      service.claim('', 'deep', { ...BODY, deep }),
      (error: unknown) => isAppError(error) && error.status === 400,
    );
  });

  it('on a store one process owns, a claim pending from before the start is free', async () => {
    const before = new IdempotencyService(store.idempotency, clock, 24);
    held(await before.claim('', 'left-behind', BODY));
    // The same process: the claim is in flight.
    await assert.rejects(
      before.claim('', 'left-behind', BODY),
      (error: unknown) => isAppError(error) && error.status === 409,
    );
    now += 1_000; // well within the 30 s an in-flight claim lives
    const restarted = new IdempotencyService(store.idempotency, clock, 24);
    held(await restarted.claim('', 'left-behind', BODY));
  });
});
