/**
 * Group commit through the store, on every engine: concurrent creates share
 * transactions, and a create that fails (here: its Idempotency-Key claim is
 * not held) fails alone while the creates around it are stored. Plus the
 * PostgreSQL batcher's own rules, with fake queries.
 */
import { messageChanges } from '../support/message-changes.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { defaultConfig } from '../../src/config.ts';
import { ErrorKinds, isAppError } from '../../src/errors.ts';
import type { NewMessage } from '../../src/domain/message.ts';
import { createStore } from '../../src/store/create-store.ts';
import { CreateBatcher, type CreateRow } from '../../src/store/postgres/create-batcher.ts';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { silent } from '../support/open-store.ts';

let clock = Date.parse('2026-11-21T10:00:00.000Z');
function newMessage(): NewMessage {
  clock += 1;
  return {
    id: uuidv7(),
    room: 'general',
    author: 'ada',
    content: 'hello',
    createdAt: new Date(clock).toISOString(),
  };
}

for (const engine of engines) {
  describe(`group commit [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);

    it(
      'a create whose claim is not held fails alone; the creates around it are stored',
      { skip },
      async () => {
        const db = await engine.createDatabase();
        const store = createStore(
          defaultConfig({ databaseUrl: db.url, logLevel: 'silent' }),
          silent,
        );
        try {
          await store.migrate();
          const inputs = Array.from({ length: 30 }, () => newMessage());
          const unclaimed = {
            scope: '',
            key: 'never-claimed',
            requestHash: 'h',
            token: randomUUID(),
          };
          const outcomes = await Promise.allSettled(
            inputs.map((m, i) => store.messages.create(m, i === 15 ? unclaimed : undefined)),
          );
          outcomes.forEach((o, i) => assert.equal(o.status, i === 15 ? 'rejected' : 'fulfilled'));
          const failure = (outcomes[15] as PromiseRejectedResult).reason;
          assert.ok(isAppError(failure) && failure.kind === ErrorKinds.storeUnavailable);
          // Told apart from the store being down (PostgreSQL signals both as serialization_failure).
          assert.match(failure.detail, /claim was lost/);
          for (const [i, m] of inputs.entries()) {
            assert.equal((await store.messages.get(m.id))?.id, i === 15 ? undefined : m.id);
          }
          const changes = messageChanges(await store.changes.since(0, 1000));
          assert.equal(changes.length, 29);
          assert.ok(!changes.some((c) => c.message.id === inputs[15]!.id));
        } finally {
          await store.close();
          await db.cleanup();
        }
      },
    );
  });
}

describe('CreateBatcher (PostgreSQL group commit)', () => {
  function fake(failWith?: (rows: readonly CreateRow[]) => unknown, batching?: boolean) {
    const calls: { kind: 'one' | 'many'; rows: CreateRow[] }[] = [];
    const batcher = new CreateBatcher({
      ...(batching === undefined ? {} : { batching }),
      one: async (row) => {
        calls.push({ kind: 'one', rows: [row] });
        const error = failWith?.([row]);
        if (error !== undefined) throw error;
      },
      many: async (rows) => {
        calls.push({ kind: 'many', rows: [...rows] });
        const error = failWith?.(rows);
        if (error !== undefined) throw error;
      },
    });
    return { batcher, calls };
  }

  /** A batcher whose first batch waits for `release()`, then fails with `failure` if given. */
  function heldFirstBatch(
    options: { failure?: unknown; failsQueue?: (e: unknown) => boolean } = {},
  ) {
    let release: () => void = () => undefined;
    const calls: CreateRow[][] = [];
    const batcher = new CreateBatcher({
      ...(options.failsQueue === undefined ? {} : { failsQueue: options.failsQueue }),
      one: async (row) => {
        calls.push([row]);
      },
      many: async (rows) => {
        calls.push([...rows]);
        if (calls.length > 1) return;
        await new Promise<void>((resolve) => (release = resolve));
        if (options.failure !== undefined) throw options.failure;
      },
    });
    return { batcher, calls, release: () => release() };
  }

  it('creates submitted in the same turn go in one batch; a lone create goes alone', async () => {
    const { batcher, calls } = fake();
    const first = Promise.all([1, 2, 3].map((n) => batcher.submit([n])));
    await Promise.resolve();
    const second = Promise.all([4, 5].map((n) => batcher.submit([n])));
    await Promise.all([first, second]);
    assert.deepEqual(calls, [{ kind: 'many', rows: [[1], [2], [3], [4], [5]] }]);
    await batcher.submit([6]);
    assert.deepEqual(calls.at(-1), { kind: 'one', rows: [[6]] });
  });

  it('with batching off each create is sent at once, alone', async () => {
    const { batcher, calls } = fake(undefined, false);
    const creates = [1, 2, 3].map((n) => batcher.submit([n]));
    assert.deepEqual(calls, [
      { kind: 'one', rows: [[1]] },
      { kind: 'one', rows: [[2]] },
      { kind: 'one', rows: [[3]] },
    ]);
    await Promise.all(creates);
  });

  it('creates arriving while a batch is in flight wait for it, then share the next batch', async () => {
    const { batcher, calls, release } = heldFirstBatch();
    const first = Promise.all([1, 2].map((n) => batcher.submit([n])));
    await new Promise((resolve) => setImmediate(resolve));
    const second = Promise.all([3, 4, 5].map((n) => batcher.submit([n])));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls.length, 1);
    release();
    await Promise.all([first, second]);
    assert.deepEqual(calls, [
      [[1], [2]],
      [[3], [4], [5]],
    ]);
  });

  it('a batch failed by one row is retried row by row: only that row fails', async () => {
    const rowError = Object.assign(new Error('duplicate key'), { code: '23505' });
    const { batcher, calls } = fake((rows) =>
      rows.some((r) => r[0] === 2) ? rowError : undefined,
    );
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit([n])));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal((outcomes[1] as PromiseRejectedResult).reason, rowError);
    assert.deepEqual(
      calls.map((c) => c.kind),
      ['many', 'one', 'one', 'one'],
    );
  });

  it('a failure of the database fails the whole batch with that error, without retries', async () => {
    const down = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
    const { batcher, calls } = fake(() => down);
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit([n])));
    for (const o of outcomes) assert.equal((o as PromiseRejectedResult).reason, down);
    assert.deepEqual(
      calls.map((c) => c.kind),
      ['many'],
    );
  });

  it('a row error wrapped by the store (as its cause) still counts as a row error', async () => {
    const lost = Object.assign(new Error('claim lost'), { code: 'MS001' });
    const wrapped = new Error('unavailable', { cause: lost });
    const { batcher, calls } = fake((rows) => (rows.some((r) => r[0] === 1) ? wrapped : undefined));
    const outcomes = await Promise.allSettled([1, 2].map((n) => batcher.submit([n])));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'fulfilled'],
    );
    assert.deepEqual(
      calls.map((c) => c.kind),
      ['many', 'one', 'one'],
    );
  });

  it('rows the failure names fail; the rest go again as one batch, until none fails', async () => {
    // As create_messages names them: the places (from 1) of every row that breaks the rule.
    const named = (code: string, rows: readonly CreateRow[], bad: number[]) => {
      const places = rows.flatMap((r, i) => (bad.includes(r[0] as number) ? [i + 1] : []));
      return places.length === 0
        ? undefined
        : Object.assign(new Error(code), { code, detail: places.join(',') });
    };
    const { batcher, calls } = fake(
      (rows) => named('MS003', rows, [2, 5]) ?? named('MS002', rows, [4, 5]),
    );
    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5, 6].map((n) => batcher.submit([n])));
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code: string }).code : 'ok')),
      ['ok', 'MS003', 'ok', 'MS002', 'MS003', 'ok'],
    );
    assert.deepEqual(calls, [
      { kind: 'many', rows: [[1], [2], [3], [4], [5], [6]] },
      { kind: 'many', rows: [[1], [3], [4], [6]] },
      { kind: 'many', rows: [[1], [3], [6]] },
    ]);
  });

  it('a failure naming no row it could mean is retried row by row', async () => {
    for (const detail of [undefined, '', '0', '4', '1,x']) {
      const odd = Object.assign(new Error('private'), { code: 'MS003', detail });
      const { batcher, calls } = fake((rows) => (rows.some((r) => r[0] === 1) ? odd : undefined));
      const outcomes = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit([n])));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'fulfilled', 'fulfilled'],
        String(detail),
      );
      assert.deepEqual(
        calls.map((c) => c.kind),
        ['many', 'one', 'one', 'one'],
        String(detail),
      );
    }
  });

  it('a batch the store did not answer in time fails the creates queued behind it, unsent', async () => {
    const late = Object.assign(new Error('store operation timed out'), { code: 'late' });
    const { batcher, calls, release } = heldFirstBatch({
      failure: late,
      failsQueue: (error) => error === late,
    });
    const first = [1, 2].map((n) => batcher.submit([n]));
    await new Promise((resolve) => setImmediate(resolve));
    const behind = [3, 4].map((n) => batcher.submit([n]));
    release();
    const outcomes = await Promise.allSettled([...first, ...behind]);
    for (const o of outcomes) assert.equal((o as PromiseRejectedResult).reason, late);
    assert.deepEqual(calls, [[[1], [2]]]);
    // Creates after it go as usual.
    await batcher.submit([5]);
    assert.deepEqual(calls.at(-1), [[5]]);
  });

  it('a row whose request was answered while its batch failed is not sent again', async () => {
    for (const named of [true, false]) {
      const late = new AbortController();
      const { batcher, calls } = fake((rows) => {
        const place = rows.findIndex((r) => r[0] === 1);
        if (place === -1) return undefined;
        // The batch is under way when the deadline of create 2 runs out.
        late.abort(new Error('timed out'));
        const error = Object.assign(new Error('reply'), { code: 'MS002' });
        return named ? Object.assign(error, { detail: String(place + 1) }) : error;
      });
      const outcomes = await Promise.allSettled(
        [1, 2, 3, 4].map((n) => batcher.submit([n], n === 2 ? late.signal : undefined)),
      );
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected', 'fulfilled', 'fulfilled'],
        `named: ${named}`,
      );
      assert.equal(calls[0]!.rows.length, 4);
      assert.ok(!calls.slice(1).some((c) => c.rows.some((r) => r[0] === 2)), `named: ${named}`);
    }
  });

  it('a create called off before its batch is sent is never sent', async () => {
    const { batcher, calls, release } = heldFirstBatch();
    const first = Promise.all([1, 2].map((n) => batcher.submit([n])));
    await new Promise((resolve) => setImmediate(resolve));
    const late = new AbortController();
    const waiting = [3, 4, 5].map((n) => batcher.submit([n], n === 4 ? late.signal : undefined));
    late.abort(new Error('timed out'));
    release();
    const outcomes = await Promise.allSettled([first, ...waiting]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(calls, [
      [[1], [2]],
      [[3], [5]],
    ]);
    // Once sent, calling it off changes nothing: the request was answered, the row commits.
    const sent = new AbortController();
    const create = batcher.submit([6], sent.signal);
    await new Promise((resolve) => setImmediate(resolve));
    sent.abort(new Error('timed out'));
    await create;
    assert.deepEqual(calls.at(-1), [[6]]);
  });
});
