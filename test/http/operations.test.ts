/** /healthz, /readyz, /metrics, /docs and /api/openapi.json. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AppError, ErrorKinds } from '../../src/errors.ts';
import { assertProblem, eachEngine, withApp, withWrappedStore } from './http-contract.ts';

eachEngine('operations', (engine, shared) => {
  it('/healthz: 200 while the process runs', async () => {
    const response = await shared().inject({ url: '/healthz' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().status, 'ok');
  });

  it('/readyz: 200 when the store answers and its migrations are applied', async () => {
    const response = await shared().inject({ url: '/readyz' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().status, 'ready');
  });

  it('/readyz: 503 with Retry-After while the store does not answer, 200 again after', async () => {
    let down = false;
    await withWrappedStore(
      engine,
      (real) => ({
        ping: async () => {
          if (down) {
            throw new AppError(ErrorKinds.storeUnavailable, 'The store is unavailable.', {
              headers: { 'retry-after': '1' },
            });
          }
          return real.ping();
        },
      }),
      async ({ inject }) => {
        assert.equal((await inject({ url: '/readyz' })).statusCode, 200);
        down = true;
        const response = await inject({ url: '/readyz' });
        assertProblem(response, 503, 'unavailable');
        assert.ok(response.headers['retry-after']);
        assert.equal((await inject({ url: '/healthz' })).statusCode, 200, 'alive all the same');
        down = false;
        assert.equal((await inject({ url: '/readyz' })).statusCode, 200);
      },
    );
  });

  it('/readyz: a plain failure of the store ping is a 503, not a 500', async () => {
    await withWrappedStore(
      engine,
      () => ({
        ping: async () => {
          throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        },
      }),
      async ({ inject }) => {
        assertProblem(await inject({ url: '/readyz' }), 503, 'unavailable');
      },
    );
  });

  it('/readyz: 503 from the start of a graceful shutdown', async () => {
    await withApp(engine, async ({ inject, t }) => {
      assert.equal((await inject({ url: '/readyz' })).statusCode, 200);
      t.app.beginShutdown();
      const response = await inject({ url: '/readyz' });
      assertProblem(response, 503, 'unavailable');
      assert.ok(response.headers['retry-after']);
      assert.equal((await inject({ url: '/healthz' })).statusCode, 200);
    });
  });

  it('/metrics: Prometheus text with request counts and latency by route and status', async () => {
    await withApp(engine, async ({ inject, create }) => {
      const message = await create();
      await inject({ url: `/api/messages/${message.id}` });
      await inject({ url: `/api/messages/${message.id}` });
      await inject({ url: '/api/messages/00000000-0000-7000-8000-000000000000' });
      await inject({ url: '/no-such-path-9f3a' });
      const response = await inject({ url: '/metrics' });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const text = response.body;
      const sample = (name: string, labels: Record<string, string>) => {
        const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
        const line = text
          .split('\n')
          .find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
        return line === undefined ? undefined : Number(line.split(' ').at(-1));
      };
      const item = { method: 'GET', route: '/api/messages/:id' };
      assert.equal(sample('http_requests_total', { ...item, status: '200' }), 2);
      assert.equal(sample('http_requests_total', { ...item, status: '404' }), 1);
      assert.equal(
        sample('http_requests_total', { method: 'POST', route: '/api/messages', status: '201' }),
        1,
      );
      assert.match(text, /# TYPE http_request_duration_seconds histogram/);
      // In the order they always came, for anyone who diffs the text.
      assert.ok(
        text.indexOf('# TYPE http_requests_total counter') <
          text.indexOf('# TYPE http_request_duration_seconds histogram'),
        'the request counter before the latency histogram',
      );
      assert.equal(
        sample('http_request_duration_seconds_bucket', { ...item, status: '200', le: '+Inf' }),
        2,
      );
      assert.equal(sample('http_request_duration_seconds_count', { ...item, status: '200' }), 2);
      assert.ok(!text.includes('no-such-path-9f3a'), 'unknown paths do not become labels');
      for (const metric of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_seconds',
      ]) {
        assert.match(text, new RegExp(`^${metric} `, 'm'), metric);
      }
    });
  });

  it('/docs serves the interactive documentation page', async () => {
    // A page, not an API response: fetched without the document check.
    const http = shared().t.app.http;
    let response = await http.inject({ url: '/docs' });
    for (
      let hops = 0;
      hops < 3 && response.statusCode >= 300 && response.statusCode < 400;
      hops++
    ) {
      const location = String(response.headers.location);
      response = await http.inject({
        url: location.startsWith('/') ? location : `/docs/${location}`,
      });
    }
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /swagger/i);
    const initializer = await http.inject({ url: '/docs/static/swagger-initializer.js' });
    assert.equal(initializer.statusCode, 200);
    assert.match(initializer.body, /\/api\/openapi\.json/, 'the page loads our document');
  });

  it('/api/openapi.json is OpenAPI 3.1 and describes every endpoint of docs/api.md', async () => {
    const response = await shared().inject({ url: '/api/openapi.json' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const document = response.json();
    assert.match(document.openapi, /^3\.1\.\d+$/);
    const operations = (path: string) => Object.keys(document.paths[path] ?? {}).sort();
    assert.deepEqual(operations('/api/messages'), ['get', 'post']);
    assert.deepEqual(operations('/api/messages/{id}'), ['delete', 'get', 'put']);
    for (const path of ['/api/openapi.json', '/healthz', '/readyz', '/metrics']) {
      assert.deepEqual(operations(path), ['get'], path);
    }
  });

  it('/api/openapi.json lists exactly the problem types clients were promised, each with its status', async () => {
    // Written out here from the error table of docs/errors.md, not read from src/errors.ts (the
    // document is generated from that catalog, so comparing the two would prove nothing).
    const promised: Record<string, number> = {
      '/problems/malformed-body': 400,
      '/problems/malformed-request': 400,
      '/problems/validation': 400,
      '/problems/fixed-field': 400,
      '/problems/unauthorized': 401,
      '/problems/forbidden': 403,
      '/problems/not-found': 404,
      '/problems/method-not-allowed': 405,
      '/problems/request-timeout': 408,
      '/problems/version-conflict': 409,
      // Removing or demoting a room's last owner: a conflict of its own kind.
      '/problems/last-owner': 409,
      // A message's 21st different emoji: a conflict of its own kind.
      '/problems/too-many-emoji': 409,
      '/problems/idempotency-in-flight': 409,
      '/problems/precondition-failed': 412,
      '/problems/payload-too-large': 413,
      '/problems/unsupported-media-type': 415,
      '/problems/range-not-satisfiable': 416,
      '/problems/idempotency-key-reuse': 422,
      '/problems/rate-limited': 429,
      '/problems/headers-too-large': 431,
      '/problems/internal': 500,
      '/problems/unavailable': 503,
      '/problems/insufficient-storage': 507,
    };
    // Answered where no documented operation runs: Node (408, 431), a method the path does
    // not have (405), the static files (416).
    const noOperation = new Set([405, 408, 416, 431]);
    const document = (await shared().inject({ url: '/api/openapi.json' })).json();

    const table: Record<string, number> = {};
    for (const [, type, status] of String(document.info.description).matchAll(
      /^\| `(\/problems\/[a-z-]+)` \| (\d{3}) \|/gm,
    )) {
      table[type!] = Number(status);
    }
    assert.deepEqual(table, promised, 'the table of problem types in the description');

    // Every problem response of every operation: its schema names exactly these types, and
    // the statuses the routes declare are the promised ones, every promised one declared.
    interface ProblemSchema {
      properties: { type: { enum: string[] } };
    }
    interface Response {
      content?: Record<string, { schema: ProblemSchema | { $ref: string } }>;
    }
    // Problems are named once (components.schemas) and referenced.
    const schemas = document.components.schemas as Record<string, ProblemSchema>;
    const resolved = (schema: ProblemSchema | { $ref: string }): ProblemSchema =>
      '$ref' in schema ? schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema;
    const paths = document.paths as Record<
      string,
      Record<string, { responses?: Record<string, Response> }>
    >;
    const declared = new Set<number>();
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const problem = response.content?.['application/problem+json'];
          if (problem === undefined) continue;
          declared.add(Number(status));
          assert.deepEqual(
            [...resolved(problem.schema).properties.type.enum].sort(),
            Object.keys(promised).sort(),
            `${method.toUpperCase()} ${path} ${status}`,
          );
        }
      }
    }
    const promisedStatuses = new Set(Object.values(promised));
    for (const status of declared) assert.ok(promisedStatuses.has(status), `${status} is promised`);
    for (const status of promisedStatuses) {
      if (!noOperation.has(status))
        assert.ok(declared.has(status), `some route declares ${status}`);
    }
  });

  it('the document is the one that validates requests: its rules are the ones enforced', async () => {
    const { inject, conformance } = shared();
    interface StringRule {
      maxLength: number;
    }
    const create = conformance.document.paths['/api/messages']!.post as unknown as {
      requestBody: {
        content: {
          'application/json': {
            schema: {
              additionalProperties: boolean;
              properties: Record<'content' | 'author' | 'room', StringRule>;
            };
          };
        };
      };
    };
    const { $ref } = create.requestBody.content['application/json'].schema as unknown as {
      $ref: string;
    };
    const schema = conformance.document.components!.schemas![
      $ref.replace('#/components/schemas/', '')
    ] as unknown as (typeof create.requestBody.content)['application/json']['schema'];
    assert.equal(schema.additionalProperties, false);
    assert.equal(schema.properties.content.maxLength, 4000);
    assert.equal(schema.properties.author.maxLength, 64);
    assert.equal(schema.properties.room.maxLength, 64);
    const tooLong = await inject({
      method: 'POST',
      url: '/api/messages',
      payload: { author: 'a', content: 'x'.repeat(schema.properties.content.maxLength + 1) },
    });
    assert.equal(tooLong.statusCode, 400);
  });
});
