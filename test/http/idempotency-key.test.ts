/** Retried creates: Idempotency-Key (docs/concepts.md, "Retried creates"). */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { AppError, ErrorKinds } from '../../src/errors.ts';
import type { Message, NewMessage } from '../../src/domain/message.ts';
import type { IdempotencyClaim } from '../../src/domain/idempotency-store.ts';
import {
  assertProblem,
  eachEngine,
  onlyError,
  startContractApp,
  uniqueRoom,
  withApp,
  withWrappedStore,
  type ContractApp,
} from './http-contract.ts';

function post(app: ContractApp, key: string | undefined, payload: string | object) {
  return app.inject({
    method: 'POST',
    url: '/api/messages',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

async function count(app: ContractApp, room: string): Promise<number> {
  return (await app.inject({ url: `/api/messages?room=${room}` })).json().length;
}

/** A gate a test opens by hand. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

eachEngine('Idempotency-Key', (engine, shared) => {
  it('the same key and body again: the first response, Idempotent-Replayed, nothing new', async () => {
    const app = shared();
    const room = uniqueRoom();
    const key = `k-${room}`;
    const first = await post(app, key, { author: 'ada', content: 'once', room });
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // Same JSON, other spelling: compared as parsed JSON.
    const again = await post(
      app,
      key,
      `{ "room": "${room}",\n "content": "once", "author": "ada" }`,
    );
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(again.headers.location, first.headers.location);
    assert.equal(again.headers.etag, first.headers.etag);
    assert.match(String(again.headers['content-type']), /^application\/json/);
    assert.equal(await count(app, room), 1);
  });

  it('a replay is the message as it was then, even after an edit', async () => {
    const app = shared();
    const room = uniqueRoom();
    const body = { author: 'ada', content: 'v1', room };
    const first = (await post(app, room, body)).json() as Message;
    await app.inject({
      method: 'PUT',
      url: `/api/messages/${first.id}`,
      payload: { content: 'v2' },
    });
    const again = await post(app, room, body);
    assert.deepEqual(again.json(), first);
    assert.equal(again.headers.etag, '"1"');
  });

  it('the same key with a different body is a 422', async () => {
    const app = shared();
    const room = uniqueRoom();
    await post(app, room, { author: 'ada', content: 'one', room });
    for (const body of [
      { author: 'ada', content: 'two', room },
      { author: 'ada', content: 'one' },
      { author: 'ada', content: 'one', room, extra: 1 },
    ]) {
      assertProblem(await post(app, room, body), 422, 'idempotency-key-reuse');
    }
    assert.equal(await count(app, room), 1);
  });

  it('different keys are different requests', async () => {
    const app = shared();
    const room = uniqueRoom();
    const body = { author: 'ada', content: 'same', room };
    const a = (await post(app, `${room}-a`, body)).json();
    const b = (await post(app, `${room}-b`, body)).json();
    assert.notEqual(a.id, b.id);
    assert.equal(await count(app, room), 2);
  });

  it('a quoted structured-field string "abc" is the same key as abc', async () => {
    const app = shared();
    const room = uniqueRoom();
    const body = { author: 'ada', content: 'q', room };
    const first = await post(app, `"${room}"`, body);
    const bare = await post(app, room, body);
    assert.equal(bare.headers['idempotent-replayed'], 'true');
    assert.deepEqual(bare.json(), first.json());
    const escaped = await post(app, `"${room}\\"x"`, body);
    const unescaped = await post(app, `${room}"x`, body);
    assert.equal(escaped.statusCode, 201);
    assert.equal(unescaped.headers['idempotent-replayed'], 'true');
    assert.deepEqual(unescaped.json(), escaped.json());
    assert.equal(await count(app, room), 2);
  });

  it('keys of 1 and 255 printable ASCII characters are accepted', async () => {
    const app = shared();
    for (const key of [`${uniqueRoom().slice(-1)}`, ` ~!${uniqueRoom()}`.padEnd(255, '#')]) {
      const room = uniqueRoom();
      const response = await post(app, key, { author: 'ada', content: 'k', room });
      assert.ok([201].includes(response.statusCode), response.body);
    }
  });

  it('a malformed key is a 400 naming the header, and nothing is stored', async () => {
    const app = shared();
    const room = uniqueRoom();
    for (const key of ['', 'x'.repeat(256), '""', 'caf\u00e9', 'tab\there']) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/messages',
        headers: { 'idempotency-key': Buffer.from(key, 'latin1').toString('latin1') },
        payload: { author: 'ada', content: 'x', room },
      });
      const problem = assertProblem(response, 400, 'validation');
      assert.equal(onlyError(problem).header, 'idempotency-key', JSON.stringify(key));
    }
    assert.equal(await count(app, room), 0);
  });

  it('a 4xx outcome is kept and replayed; a later fixed body is a 422', async () => {
    const app = shared();
    const room = uniqueRoom();
    const bad = { author: 'ada', content: ' ', room };
    const first = await post(app, room, bad);
    assertProblem(first, 400, 'validation');
    const again = await post(app, room, bad);
    assert.equal(again.statusCode, 400);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.match(String(again.headers['content-type']), /^application\/problem\+json/);
    assertProblem(await post(app, room, { ...bad, content: 'fixed' }), 422);
    assert.equal(await count(app, room), 0);
  });

  it('a 400 for a body of thousands of unknown fields is small, and so is the outcome kept', async () => {
    const app = shared();
    const unknown: Record<string, number> = {};
    for (let i = 0; JSON.stringify(unknown).length < 64_000; i++) unknown[`field${i}`] = i;
    const longNames = Object.fromEntries(
      ['a', 'b', 'c'].map((c) => [c.repeat(20_000), 1] as const),
    );
    for (const body of [unknown, longNames]) {
      const key = `big-${uniqueRoom()}`;
      const first = await post(app, key, body);
      const problem = assertProblem(first, 400, 'validation');
      assert.ok(first.rawPayload.length <= 8192, `the answer weighs ${first.rawPayload.length} B`);
      assert.ok(problem.errors!.length <= 20, `${problem.errors!.length} entries`);
      const listed = problem.errors!.length;
      const failures = Object.keys(body).length + 2; // every unknown field, author and content
      if (failures > listed) {
        assert.match(problem.detail, new RegExp(`\\b${failures - listed} more\\b`));
      }
      for (const entry of problem.errors!) {
        assert.ok(entry.pointer!.length <= 130, entry.pointer!.slice(0, 200));
        assert.ok(entry.detail.length <= 300, entry.detail.slice(0, 400));
      }
      // What the key keeps is what a replay sends, byte for byte.
      const replay = await post(app, key, body);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
    }
  });

  it('a deeply nested body is a 400, with a key or without, never a 5xx', async () => {
    const app = shared();
    const nested = (depth: number, open: string, close: string) =>
      `${open.repeat(depth)}${close.repeat(depth)}`;
    for (const depth of [40, 7_000, 10_000]) {
      for (const value of [
        nested(depth, '[', ']'),
        nested(depth, '{"a":', '}').replace(/:}/, ':1}'),
      ]) {
        const payload = `{"author":"ada","content":"x","deep":${value}}`;
        for (const key of [undefined, `deep-${uniqueRoom()}`]) {
          const response = await post(app, key, payload);
          assertProblem(response, 400);
        }
      }
    }
  });

  it('while the first request with the key is in flight, the same key is a 409', async () => {
    const entered = gate();
    const release = gate();
    let holdNext = true;
    await withWrappedStore(
      engine,
      (real) => ({
        messages: {
          create: async (message: NewMessage, claim?: IdempotencyClaim) => {
            if (holdNext) {
              holdNext = false;
              entered.open();
              await release.wait;
            }
            return real.messages.create(message, claim);
          },
        },
      }),
      async (app) => {
        const body = { author: 'ada', content: 'slow' };
        const first = post(app, 'in-flight', body);
        await entered.wait;
        const during = await post(app, 'in-flight', body);
        assertProblem(during, 409, 'idempotency-in-flight');
        assert.ok(during.headers['retry-after'], 'says when to retry');
        const differentBody = await post(app, 'in-flight', { ...body, content: 'other' });
        assert.equal(differentBody.statusCode, 409);
        release.open();
        const done = await first;
        assert.equal(done.statusCode, 201);
        const after = await post(app, 'in-flight', body);
        assert.equal(after.headers['idempotent-replayed'], 'true');
        assert.deepEqual(after.json(), done.json());
      },
    );
  });

  for (const [what, failure] of [
    ['a 500', () => new Error('disk on fire')],
    [
      'a 503',
      () => new AppError(ErrorKinds.storeUnavailable, 'down', { headers: { 'retry-after': '1' } }),
    ],
  ] as const) {
    it(`after ${what} the key is free again: the retry runs`, async () => {
      let failNext = true;
      await withWrappedStore(
        engine,
        (real) => ({
          messages: {
            create: async (message: NewMessage, claim?: IdempotencyClaim) => {
              if (failNext) {
                failNext = false;
                throw failure();
              }
              return real.messages.create(message, claim);
            },
          },
        }),
        async (app) => {
          const body = { author: 'ada', content: 'retry me' };
          const failed = await post(app, 'retry', body);
          assert.ok(failed.statusCode >= 500, failed.body);
          const retry = await post(app, 'retry', body);
          assert.equal(retry.statusCode, 201, retry.body);
          assert.equal(retry.headers['idempotent-replayed'], undefined);
          const again = await post(app, 'retry', body);
          assert.equal(again.headers['idempotent-replayed'], 'true');
          assert.deepEqual(again.json(), retry.json());
          assert.equal((await app.inject({ url: '/api/messages' })).json().length, 1);
        },
      );
    });
  }

  it('keys survive a restart (a new app on the same database)', async () => {
    const db = await engine.createDatabase();
    try {
      const body = { author: 'ada', content: 'before restart' };
      const first = await startContractApp(engine, {}, {}, db);
      const created = await post(first, 'restart', body);
      assert.equal(created.statusCode, 201);
      const refused = await post(first, 'restart-400', { author: '' });
      assert.equal(refused.statusCode, 400);
      await first.close();
      const second = await startContractApp(engine, {}, {}, db);
      try {
        const replay = await post(second, 'restart', body);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay.json(), created.json());
        const replay400 = await post(second, 'restart-400', { author: '' });
        assert.equal(replay400.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay400.json(), refused.json());
        assertProblem(await post(second, 'restart', { ...body, content: 'x' }), 422);
        assert.equal((await second.inject({ url: '/api/messages' })).json().length, 1);
      } finally {
        await second.close();
      }
    } finally {
      await db.cleanup();
    }
  });

  it('kept for 24 hours; an in-flight claim of a crashed process expires within 30 s', async () => {
    let now = Date.parse('2026-11-21T10:00:00.000Z');
    await withApp(
      engine,
      async (app) => {
        const body = { author: 'ada', content: 'kept' };
        const first = await post(app, 'ttl', body);
        now += 24 * 3_600_000 - 1;
        assert.equal((await post(app, 'ttl', body)).headers['idempotent-replayed'], 'true');
        now += 2;
        const later = await post(app, 'ttl', body);
        assert.equal(later.statusCode, 201);
        assert.equal(later.headers['idempotent-replayed'], undefined);
        assert.notEqual(later.json().id, first.json().id);

        // A process that claimed a key and died before answering: its claim
        // sits in the store, in flight.
        const crashedBody = { author: 'ada', content: 'crashed' };
        await app.t.app.store.idempotency.claim(
          {
            scope: '',
            key: 'crashed',
            requestHash: createHash('sha256')
              .update(stableStringify(crashedBody))
              .digest('base64url'),
            token: 'dead-process',
          },
          { now: new Date(now), inFlightMs: 30_000, ttlMs: 86_400_000 },
        );
        assertProblem(await post(app, 'crashed', crashedBody), 409, 'idempotency-in-flight');
        now += 30_000;
        const retried = await post(app, 'crashed', crashedBody);
        assert.equal(retried.statusCode, 201, retried.body);
      },
      {},
      { now: () => new Date(now) },
    );
  });

  if (engine.name === 'postgres') {
    it('keys hold across instances that share the store', async () => {
      const db = await engine.createDatabase();
      const [a, b] = await Promise.all([
        startContractApp(engine, {}, {}, db),
        startContractApp(engine, {}, {}, db),
      ]);
      try {
        const body = { author: 'ada', content: 'across instances' };
        const created = await post(a, 'shared-key', body);
        assert.equal(created.statusCode, 201);
        const replay = await post(b, 'shared-key', body);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay.json(), created.json());
        assertProblem(await post(b, 'shared-key', { ...body, content: 'other' }), 422);
        // Racing the same new key on both: one create, the other a 409 or a replay.
        const raced = await Promise.all([
          post(a, 'raced-key', body),
          post(b, 'raced-key', body),
          post(a, 'raced-key', body),
          post(b, 'raced-key', body),
        ]);
        const fresh = raced.filter(
          (r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined,
        );
        assert.equal(fresh.length, 1, raced.map((r) => r.statusCode).join(','));
        for (const r of raced) assert.ok([201, 409].includes(r.statusCode));
        assert.equal((await a.inject({ url: '/api/messages' })).json().length, 2);
      } finally {
        await a.close();
        await b.close();
        await db.cleanup();
      }
    });
  }

  it('the key is about the create only: a GET with one is unaffected', async () => {
    const app = shared();
    const response = await app.inject({
      url: '/api/messages?limit=1',
      headers: { 'idempotency-key': 'irrelevant' },
    });
    assert.equal(response.statusCode, 200);
  });
});
