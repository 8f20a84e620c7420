/**
 * The error table (301/308/400/404/405/409/412/413/415/422/500), the order
 * of precedence, the problem document's fields, Cache-Control and
 * X-Request-Id. (401/403/429 belong to auth and rate limits; 503 is in
 * store-outage.test.ts.)
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import {
  assertProblem,
  eachEngine,
  onlyError,
  withApp,
  withWrappedStore,
  type ProblemBody,
} from './http-contract.ts';

const UNKNOWN_ID = '00000000-0000-7000-8000-000000000000';

eachEngine('errors', (engine, shared) => {
  it('301 for GET/HEAD of a known path with a trailing slash, query kept', async () => {
    const { inject, create } = shared();
    const message = await create();
    const cases: [string, string][] = [
      ['/api/messages/', '/api/messages'],
      ['/api/messages/?room=x&limit=2', '/api/messages?room=x&limit=2'],
      [`/api/messages/${message.id}/`, `/api/messages/${message.id}`],
      ['/api/messages//', '/api/messages'],
      ['/healthz/', '/healthz'],
    ];
    for (const [from, to] of cases) {
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await inject({ method, url: from });
        assert.equal(response.statusCode, 301, `${method} ${from}`);
        assert.equal(response.headers.location, to);
      }
    }
  });

  it('308 for other methods, so the method and body are kept', async () => {
    const { inject, create } = shared();
    const message = await create();
    const cases: [string, string][] = [
      ['POST', '/api/messages/'],
      ['PUT', `/api/messages/${message.id}/`],
      ['DELETE', `/api/messages/${message.id}/?x=1`],
    ];
    for (const [method, url] of cases) {
      const response = await inject({
        method: method as 'POST',
        url,
        payload: { author: 'ada', content: 'x' },
      });
      assert.equal(response.statusCode, 308, `${method} ${url}`);
      assert.equal(response.headers.location, url.replace(/\/(\?|$)/, '$1'));
    }
    assert.equal((await inject({ url: `/api/messages/${message.id}` })).statusCode, 200);
  });

  it('404 problem for an unknown path, also with a trailing slash', async () => {
    const { inject } = shared();
    for (const url of ['/api/nope', '/nope', '/api/messages/x/y', '/nope/', '/api/']) {
      assertProblem(await inject({ url }), 404, 'not-found');
    }
  });

  it('405 with Allow for a method the path does not support', async () => {
    const { inject } = shared();
    const collection = await inject({ method: 'DELETE', url: '/api/messages' });
    assertProblem(collection, 405, 'method-not-allowed');
    const allowed = String(collection.headers.allow).split(/,\s*/);
    assert.ok(
      allowed.includes('GET') && allowed.includes('POST'),
      String(collection.headers.allow),
    );
    assert.ok(!allowed.includes('DELETE'));
    const item = await inject({ method: 'PATCH', url: `/api/messages/${UNKNOWN_ID}` });
    assertProblem(item, 405, 'method-not-allowed');
    const itemAllowed = String(item.headers.allow).split(/,\s*/);
    for (const m of ['GET', 'PUT', 'DELETE']) assert.ok(itemAllowed.includes(m), m);
    assert.ok(!itemAllowed.includes('POST'));
    const health = await inject({ method: 'POST', url: '/healthz' });
    assert.equal(health.statusCode, 405);
  });

  it('400 for malformed JSON', async () => {
    const { inject } = shared();
    for (const payload of ['{', '{"author": "ada",}', "{'a':1}", 'nul', '{"a":1}{"b":2}', '']) {
      const response = await inject({
        method: 'POST',
        url: '/api/messages',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assertProblem(response, 400);
    }
  });

  it('400 for a body that is not an object', async () => {
    const { inject } = shared();
    for (const payload of [
      '[]',
      '"text"',
      '42',
      'null',
      'true',
      '[{"author":"a","content":"b"}]',
    ]) {
      for (const method of ['POST', 'PUT'] as const) {
        const response = await inject({
          method,
          url: method === 'POST' ? '/api/messages' : `/api/messages/${UNKNOWN_ID}`,
          headers: { 'content-type': 'application/json' },
          payload,
        });
        assertProblem(response, 400);
      }
    }
  });

  it('400 for prototype-poisoning keys, never a 500', async () => {
    const { inject } = shared();
    for (const payload of [
      '{"author":"a","content":"b","__proto__":{"x":1}}',
      '{"author":"a","content":"b","constructor":{"prototype":{"x":1}}}',
    ]) {
      const response = await inject({
        method: 'POST',
        url: '/api/messages',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assertProblem(response, 400);
    }
  });

  it('413 for a body larger than the limit (64 KiB by default)', async () => {
    const { inject } = shared();
    const content = 'x'.repeat(64 * 1024);
    const response = await inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author: 'ada', content },
    });
    assertProblem(response, 413, 'payload-too-large');
    const put = await inject({
      method: 'PUT',
      url: `/api/messages/${UNKNOWN_ID}`,
      payload: { content },
    });
    assertProblem(put, 413, 'payload-too-large');
  });

  it('413 follows the configured body limit', async () => {
    await withApp(
      engine,
      async ({ inject }) => {
        const fits = await inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'ada', content: 'x'.repeat(900) },
        });
        assert.equal(fits.statusCode, 201);
        const tooBig = await inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'ada', content: 'x'.repeat(1100) },
        });
        assertProblem(tooBig, 413, 'payload-too-large');
      },
      { bodyLimit: 1024 },
    );
  });

  it('415 for POST/PUT whose Content-Type is not JSON, or missing', async () => {
    const { inject, create } = shared();
    const message = await create();
    const types = [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=iso-8859-1',
      'application/jsonx',
      'json',
    ];
    for (const type of types) {
      for (const [method, url] of [
        ['POST', '/api/messages'],
        ['PUT', `/api/messages/${message.id}`],
      ] as const) {
        const response = await inject({
          method,
          url,
          headers: { 'content-type': type },
          payload: JSON.stringify({ author: 'ada', content: 'x' }),
        });
        assertProblem(response, 415, 'unsupported-media-type');
      }
    }
    const none = await inject({
      method: 'POST',
      url: '/api/messages',
      payload: Buffer.from(JSON.stringify({ author: 'ada', content: 'x' })),
    });
    assertProblem(none, 415, 'unsupported-media-type');
  });

  it('JSON media types with parameters or a +json suffix are accepted', async () => {
    const { inject } = shared();
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
      'application/merge-patch+json',
    ]) {
      const response = await inject({
        method: 'POST',
        url: '/api/messages',
        headers: { 'content-type': type },
        payload: JSON.stringify({ author: 'ada', content: 'x' }),
      });
      assert.equal(response.statusCode, 201, `${type}: ${response.body}`);
    }
  });

  it('500 says nothing internal and is logged with the request id', async () => {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const secret =
      'SELECT * FROM messages WHERE id = $1 -- at Object.get (/srv/app/src/store/x.ts:12:3)';
    await withWrappedStore(
      engine,
      () => ({
        messages: {
          getText: async () => {
            throw new Error(secret);
          },
        },
      }),
      async ({ inject }) => {
        const response = await inject({
          url: `/api/messages/${UNKNOWN_ID}`,
          headers: { 'x-request-id': 'req-500-test' },
        });
        const problem = assertProblem(response, 500, 'internal');
        assert.equal(problem.instance, 'urn:request:req-500-test');
        for (const leak of ['SELECT', '/srv', '.ts', 'at ', 'stack', 'messages WHERE']) {
          assert.ok(!response.body.includes(leak), `the body does not show ${leak}`);
        }
        const logged = lines
          .map(
            (l) => JSON.parse(l) as { level: number; reqId?: string; err?: { message?: string } },
          )
          .find((l) => l.level >= 50 && l.reqId === 'req-500-test');
        assert.ok(logged, 'the failure is logged at error level with the request id');
        assert.equal(logged.err?.message, secret, 'the log has the details');
      },
      { logLevel: 'info' },
      { logStream },
    );
  });

  it('409 and 412 and 422 are problems too (details in their own files)', async () => {
    const { inject, create } = shared();
    const message = await create();
    const url = `/api/messages/${message.id}`;
    assertProblem(
      await inject({ method: 'PUT', url, payload: { content: 'x', version: 9 } }),
      409,
      'version-conflict',
    );
    assertProblem(
      await inject({
        method: 'PUT',
        url,
        payload: { content: 'x' },
        headers: { 'if-match': '"9"' },
      }),
      412,
      'precondition-failed',
    );
    const key = `k-${uuidv7()}`;
    await inject({
      method: 'POST',
      url: '/api/messages',
      headers: { 'idempotency-key': key },
      payload: { author: 'ada', content: 'a' },
    });
    assertProblem(
      await inject({
        method: 'POST',
        url: '/api/messages',
        headers: { 'idempotency-key': key },
        payload: { author: 'ada', content: 'b' },
      }),
      422,
      'idempotency-key-reuse',
    );
  });

  precedenceTests();

  function precedenceTests() {
    const big = JSON.stringify({ content: 'x'.repeat(70 * 1024) });

    it('precedence: 413 before 415 and 400', async () => {
      const { inject } = shared();
      const response = await inject({
        method: 'POST',
        url: '/api/messages',
        headers: { 'content-type': 'text/plain' },
        payload: `{${big}`,
      });
      assertProblem(response, 413);
    });

    it('precedence: 415 before 400 and 404', async () => {
      const { inject } = shared();
      for (const url of ['/api/messages', `/api/messages/${UNKNOWN_ID}`]) {
        const response = await inject({
          method: url === '/api/messages' ? 'POST' : 'PUT',
          url,
          headers: { 'content-type': 'text/plain', 'idempotency-key': 'x'.repeat(300) },
          payload: '{not json',
        });
        assertProblem(response, 415);
      }
    });

    it('precedence: 400 (malformed body, header or field rule) before 404', async () => {
      const { inject } = shared();
      const url = `/api/messages/${UNKNOWN_ID}`;
      for (const [payload, headers] of [
        ['{', {}],
        [JSON.stringify({ content: '' }), {}],
        [JSON.stringify({ content: 'x', extra: 1 }), {}],
        [JSON.stringify({ content: 'x' }), { 'if-match': 'garbage' }],
      ] as const) {
        const response = await inject({
          method: 'PUT',
          url,
          headers: { 'content-type': 'application/json', ...headers },
          payload,
        });
        assertProblem(response, 400);
      }
      const del = await inject({ method: 'DELETE', url, headers: { 'if-match': 'garbage' } });
      assertProblem(del, 400);
      const get = await inject({ url, headers: { 'if-none-match': 'garbage' } });
      assertProblem(get, 400);
    });

    it('precedence: 404 before 400 fixed field, 409 and 412', async () => {
      const { inject } = shared();
      const response = await inject({
        method: 'PUT',
        url: `/api/messages/${UNKNOWN_ID}`,
        headers: { 'if-match': '"9"' },
        payload: { content: 'x', room: 'other', version: 9 },
      });
      assertProblem(response, 404);
    });

    it('precedence: 400 fixed field before 409 before 412', async () => {
      const { inject, create } = shared();
      const message = await create();
      const url = `/api/messages/${message.id}`;
      const all = await inject({
        method: 'PUT',
        url,
        headers: { 'if-match': '"9"' },
        payload: { content: 'x', room: 'other', version: 9 },
      });
      assertProblem(all, 400, 'fixed-field');
      const conflictAndPrecondition = await inject({
        method: 'PUT',
        url,
        headers: { 'if-match': '"9"' },
        payload: { content: 'x', version: 9 },
      });
      assertProblem(conflictAndPrecondition, 409, 'version-conflict');
    });
  }

  it('every /api response carries Cache-Control: no-cache, errors included', async () => {
    const { inject, create } = shared();
    const message = await create();
    const requests = [
      { url: '/api/messages' },
      { url: `/api/messages/${message.id}` },
      { url: `/api/messages/${message.id}`, headers: { 'if-none-match': '"1"' } },
      { url: `/api/messages/${UNKNOWN_ID}` },
      { url: '/api/messages?limit=0' },
      { url: '/api/nope' },
      { url: '/api/messages/' },
      { method: 'POST' as const, url: '/api/messages/' },
      { method: 'PATCH' as const, url: '/api/messages' },
      { method: 'POST' as const, url: '/api/messages', payload: { author: 'ada', content: 'x' } },
      { method: 'POST' as const, url: '/api/messages', payload: { content: 1 } },
      {
        method: 'POST' as const,
        url: '/api/messages',
        headers: { 'content-type': 'text/plain' },
        payload: 'x',
      },
      {
        method: 'POST' as const,
        url: '/api/messages',
        payload: { author: 'ada', content: 'x'.repeat(70_000) },
      },
      { url: '/api/openapi.json' },
    ];
    for (const request of requests) {
      const response = await inject(request);
      assert.equal(
        response.headers['cache-control'],
        'no-cache',
        `${request.method ?? 'GET'} ${request.url} -> ${response.statusCode}`,
      );
    }
  });

  it('X-Request-Id: a sent one is echoed and is the problem instance', async () => {
    const { inject } = shared();
    const response = await inject({
      url: `/api/messages/${UNKNOWN_ID}`,
      headers: { 'x-request-id': 'client-chosen.id_1:2~3' },
    });
    assert.equal(response.headers['x-request-id'], 'client-chosen.id_1:2~3');
    assert.equal((response.json() as ProblemBody).instance, 'urn:request:client-chosen.id_1:2~3');
    const ok = await inject({ url: '/api/messages?limit=1', headers: { 'x-request-id': 'abc' } });
    assert.equal(ok.headers['x-request-id'], 'abc');
  });

  it('X-Request-Id: generated when absent or unusable, unique per request', async () => {
    const { inject } = shared();
    const seen = new Set<string>();
    for (const sent of [undefined, undefined, 'has spaces in it', 'x'.repeat(129), '']) {
      const response = await inject({
        url: '/api/messages/nope',
        headers: sent === undefined ? {} : { 'x-request-id': sent },
      });
      const id = response.headers['x-request-id'] as string;
      assert.ok(id && id !== sent && !seen.has(id), `generated: ${id}`);
      seen.add(id);
      assert.equal((response.json() as ProblemBody).instance, `urn:request:${id}`);
    }
    for (const url of ['/healthz', '/api/messages/']) {
      assert.ok((await inject({ url })).headers['x-request-id'], url);
    }
  });

  it('problem fields: type, title, status, detail, instance; errors located exactly once', async () => {
    const { inject } = shared();
    const response = await inject({
      method: 'POST',
      url: '/api/messages?limit=x',
      headers: { 'idempotency-key': 'x'.repeat(300) },
      payload: { author: 'ada', content: 'x' },
    });
    const problem = assertProblem(response, 400, 'validation');
    assert.equal(onlyError(problem).header, 'idempotency-key');
    const body = assertProblem(
      await inject({ method: 'POST', url: '/api/messages', payload: { author: 1, content: 2 } }),
      400,
      'validation',
    );
    assert.deepEqual(body.errors?.map((e) => e.pointer).sort(), ['#/author', '#/content']);
    const query = assertProblem(await inject({ url: '/api/messages?order=x' }), 400);
    assert.deepEqual(query.errors, [
      { parameter: 'order', detail: "order must be 'asc' or 'desc'" },
    ]);
    // The same type for a body, header or parameter that fails its rule.
    assert.equal(problem.type, body.type);
    assert.equal(body.type, query.type);
    assert.equal(problem.title, body.title);
  });

  it('one entry per failure: every missing or broken field is named at once (POST and PUT)', async () => {
    const { inject, create } = shared();
    const pointers = async (method: 'POST' | 'PUT', url: string, payload: object) => {
      const problem = assertProblem(await inject({ method, url, payload }), 400, 'validation');
      return problem.errors?.map((e) => e.pointer).sort();
    };
    // With auth off `author` is required: named together with the schema's failures.
    assert.deepEqual(await pointers('POST', '/api/messages', {}), ['#/author', '#/content']);
    assert.deepEqual(await pointers('POST', '/api/messages', { room: 'general' }), [
      '#/author',
      '#/content',
    ]);
    assert.deepEqual(await pointers('POST', '/api/messages', { room: 'no spaces', x: 1 }), [
      '#/author',
      '#/content',
      '#/room',
      '#/x',
    ]);
    const message = await create();
    const url = `/api/messages/${message.id}`;
    assert.deepEqual(await pointers('PUT', url, {}), ['#/content']);
    assert.deepEqual(await pointers('PUT', url, { room: 'no spaces', version: 0, x: 1 }), [
      '#/content',
      '#/room',
      '#/version',
      '#/x',
    ]);
  });
});
