/**
 * Property-based hostile input (fast-check), on both engines: generated
 * methods, paths, query strings, headers and bodies thrown at every endpoint.
 *
 * - never a 5xx, and every error a well-formed RFC 9457 problem;
 * - a rejected write changes nothing stored;
 * - valid text of any kind comes back byte for byte;
 * - with auth on, no generated credential gets past 401 or causes a 5xx.
 *
 * PROPERTY_RUNS sets the generated cases per property (default 100, which
 * keeps the file well under a minute in CI); PROPERTY_SEED replays a run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Message } from '../../src/domain/message.ts';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { AUTH, bearer, token } from '../auth/tokens.ts';
import {
  LONGEST_TEXTS,
  SPECIAL_TEXTS,
  assertWellFormedAnswer,
  isValidAuthor,
  isValidContent,
  listAll,
  rawRequest,
  type Answer,
} from './hostile-support.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
const SEED =
  process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);
const PARAMS = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) };

/** fc.assert, with the failing assertion's own message in the report. */
async function check<T>(property: fc.IAsyncProperty<T>): Promise<void> {
  try {
    await fc.assert(property, PARAMS);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const why = cause instanceof Error ? `\n\nFailure: ${cause.message}` : '';
    throw new Error(`${(error as Error).message}${why}`);
  }
}

// --- generators --------------------------------------------------------------

const char = (codes: readonly number[]) =>
  fc.constantFrom(...codes.map((c) => String.fromCharCode(c)));
const NASTY_UNITS = [
  '\u0000',
  '\u0007',
  '\t',
  '\n',
  '\r',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u00a0',
  '\u2028',
  '\u202e',
  '\u200b',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '😀',
  'e\u0301',
  '\u0301',
  '%',
  "'",
  '"',
  '\\',
  ';',
  '-',
  '/',
  '.',
  '*',
  '$',
  '?',
  ':',
  '@',
  ' ',
];

/** Strings of every kind: any code point, lone surrogates, nasty units, known attack texts, huge ones. */
const hostileString = fc.oneof(
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 4 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...NASTY_UNITS), maxLength: 30 }), weight: 4 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 2 },
  { arbitrary: fc.constantFrom(...SPECIAL_TEXTS), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', minLength: 3990, maxLength: 4010 }), weight: 1 },
  { arbitrary: fc.constantFrom('', ' ', '\u3000', 'x'.repeat(4001), 'x'.repeat(65)), weight: 1 },
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileString, weight: 6 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double(), weight: 1 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
);

const fieldName = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      'author',
      'content',
      'room',
      'id',
      'version',
      'createdAt',
      'updatedAt',
    ),
    weight: 6,
  },
  { arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '$where', ''), weight: 1 },
  { arbitrary: hostileString, weight: 1 },
);

/** A JSON object: mostly known fields with hostile values, sometimes unknown fields. */
const hostileObject = fc.dictionary(fieldName, hostileValue, { maxKeys: 5 });

/**
 * Arrays and objects inside one another, shallow or thousands deep (within
 * the body limit), at the top or as a field's value: whatever walks a body
 * (a validator, the Idempotency-Key fingerprint) must not recurse into a 5xx.
 */
const nestedBody = fc
  .record({
    depth: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1_000, max: 10_000 })),
    open: fc.constantFrom('[', '{"a":', '{"content":'),
    at: fc.constantFrom('top', 'content', 'unknown'),
  })
  .map(({ depth, open, at }) => {
    const inner = `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`;
    if (at === 'top') return inner;
    return `{"author":"ada",${at === 'content' ? '"content"' : '"x"'}:${inner}}`;
  });

/** Hundreds or thousands of unknown fields, or a few with huge names: the 400 must stay small. */
const manyFieldsBody = fc
  .record({
    count: fc.integer({ min: 21, max: 4_000 }),
    nameLength: fc.integer({ min: 1, max: 12 }),
  })
  .map(({ count, nameLength }) => {
    const fields = Array.from(
      { length: nameLength > 10 ? 3 : count },
      (_, i) => `"${String(i).padStart(nameLength > 10 ? 15_000 : nameLength, 'x')}":${i}`,
    );
    return `{${fields.join(',')}}`;
  });

/** What a body can be: an object's JSON, any JSON, deep nesting, raw bytes, or broken JSON. */
const hostileBody: fc.Arbitrary<Buffer | string | undefined> = fc.oneof(
  { arbitrary: hostileObject.map((o) => JSON.stringify(o)), weight: 6 },
  { arbitrary: nestedBody, weight: 2 },
  { arbitrary: manyFieldsBody, weight: 1 },
  { arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 120 }).map((a) => Buffer.from(a)), weight: 1 },
  {
    arbitrary: fc
      .tuple(hostileObject, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 3 }))
      .map(([o, at, bytes]) => {
        const text = Buffer.from(JSON.stringify(o));
        const cut = at % (text.length + 1);
        return Buffer.concat([text.subarray(0, cut), Buffer.from(bytes), text.subarray(cut)]);
      }),
    weight: 2,
  },
  { arbitrary: fc.constant(undefined), weight: 1 },
);

/** Header values as they can arrive over HTTP: visible ASCII and Latin-1, spaces, tabs. */
const headerValue = fc.oneof(
  fc.string({ unit: char([...Array(95).keys()].map((i) => i + 0x20)), maxLength: 40 }),
  fc.string({
    unit: char([0x09, 0x20, 0x22, 0x2a, 0x2c, 0x57, 0x2f, 0x31, 0xe9, 0xff]),
    maxLength: 12,
  }),
  fc.constantFrom(
    '*',
    '"1"',
    'W/"1"',
    '"1", "2"',
    '""',
    '"',
    '0',
    '-1',
    '99999999999999999999',
    'null',
  ),
);

const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json; charset="utf-8"',
  'application/json; charset=latin1',
  'application/JSON',
  'application/problem+json',
  'application/merge-patch+json',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json;;;',
  '',
);

/** Keys of every shape, and well-formed ones often (some repeat, so claims meet kept answers). */
const idempotencyKey = fc.oneof(
  headerValue,
  fc.constantFrom('k', 'retry-1', '"quoted"', 'x'.repeat(255)),
  fc.uuid(),
);

const hostileHeaders = fc.record(
  {
    'content-type': contentType,
    'idempotency-key': idempotencyKey,
    'if-match': headerValue,
    'if-none-match': headerValue,
    'last-event-id': headerValue,
    'x-request-id': headerValue,
    authorization: headerValue,
    accept: headerValue,
    origin: headerValue,
  },
  { requiredKeys: [] },
);

const hexId = fc.uuid({ version: [1, 4, 7] });
const encoded = hostileString.map((s) =>
  encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd')),
);
const rawSegment = fc.string({
  unit: fc.constantFrom(
    '%00',
    '%2e',
    '%2f',
    '%5c',
    '%ZZ',
    '%',
    '..',
    '.',
    '%c0%ae',
    '%E2%80%AE',
    'a',
    '-',
    '_',
    '~',
    '0',
    'F',
  ),
  maxLength: 8,
});

function pathArbitrary(ids: () => readonly string[]) {
  const known = fc.constant(null).map(() => {
    const list = ids();
    return list.length === 0 ? '00000000-0000-7000-8000-000000000000' : list[list.length - 1]!;
  });
  const id = fc.oneof(
    known,
    known.map((s) => s.toUpperCase()),
    hexId,
    encoded,
    rawSegment,
  );
  return fc.oneof(
    {
      arbitrary: fc.constantFrom(
        '/api/messages',
        '/api/events',
        '/api/openapi.json',
        '/healthz',
        '/readyz',
        '/metrics',
        '/',
        '/docs',
        '/api',
        '/api/',
        '/api/messages/',
        '/index.html',
        '/app.js',
      ),
      weight: 4,
    },
    { arbitrary: id.map((x) => `/api/messages/${x}`), weight: 6 },
    {
      arbitrary: fc
        .array(fc.oneof(rawSegment, encoded), { minLength: 1, maxLength: 4 })
        .map((p) => `/${p.join('/')}`),
      weight: 1,
    },
    { arbitrary: fc.oneof(rawSegment, encoded).map((p) => `/api/${p}`), weight: 1 },
  );
}

const queryKey = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      'room',
      'limit',
      'order',
      'after',
      'before',
      'id',
      'since',
      'access_token',
    ),
    weight: 6,
  },
  { arbitrary: encoded, weight: 1 },
);
const queryValue = fc.oneof(
  fc.constantFrom(
    'general',
    'seed',
    '1',
    '0',
    '-1',
    '1000',
    '1001',
    'asc',
    'desc',
    'ASC',
    '',
    '1e3',
    '0x10',
    '%201',
    '+1',
  ),
  hexId,
  encoded,
  rawSegment,
);
const queryString = fc
  .array(fc.tuple(queryKey, queryValue), { maxLength: 5 })
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));

const method = fc.constantFrom('GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS');

interface HostileRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | undefined>;
  body: Buffer | string | undefined;
}

function requestArbitrary(
  ids: () => readonly string[],
  methods = method,
): fc.Arbitrary<HostileRequest> {
  return fc.record({
    method: methods,
    path: pathArbitrary(ids),
    query: queryString,
    headers: hostileHeaders,
    body: hostileBody,
  });
}

/** Valid content and authors, biased to the nasty kinds of valid text. */
const validContent = fc
  .oneof(
    { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }), weight: 4 },
    { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 50 }), weight: 2 },
    {
      arbitrary: fc
        .array(fc.constantFrom(...SPECIAL_TEXTS), { minLength: 1, maxLength: 4 })
        .map((a) => a.join(' ')),
      weight: 3,
    },
    { arbitrary: fc.constantFrom(...LONGEST_TEXTS), weight: 1 },
  )
  .filter(isValidContent);
const validAuthor = fc
  .oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 }),
  )
  .filter(isValidAuthor);
// `.` and `..` cannot be addressed in a path, so they are no room's name.
const validRoom = fc
  .stringMatching(/^[A-Za-z0-9_.-]{1,64}$/)
  .filter((room) => room !== '.' && room !== '..');

// --- sending -------------------------------------------------------------------

async function send(t: TestApp, request: HostileRequest): Promise<Answer> {
  const url = `${request.path}${request.query}`;
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const withBody = request.body !== undefined && !['GET', 'HEAD'].includes(request.method);
  // An event stream that opens never ends: it goes over a real socket and is closed at once.
  if (request.method === 'GET' && request.path === '/api/events') {
    return rawRequest(t.url, { method: 'GET', path: url, headers });
  }
  const response = await t.app.http.inject({
    method: request.method as 'GET',
    url,
    headers,
    ...(withBody ? { payload: request.body } : {}),
  });
  return {
    method: request.method,
    url,
    status: response.statusCode,
    headers: response.headers,
    body: response.body,
  };
}

for (const engine of engines) {
  describe(`hostile input, property-based [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);
    let t: TestApp;
    let ids: string[] = [];

    async function reseed(): Promise<void> {
      const all = await listAll(t);
      ids = all.map((m) => m.id);
      while (ids.length < 3) {
        const response = await t.app.http.inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'seed', content: `seed ${ids.length}`, room: 'seed' },
        });
        ids.push(response.json<Message>().id);
      }
    }

    before(async () => {
      if (skip) return;
      t = await startTestApp(engine, { eventsHeartbeatMs: 1000 });
      await t.listen();
      await reseed();
    });
    after(async () => t?.close());

    it(
      `never answers 5xx, and every error is a well-formed problem (${RUNS} runs)`,
      { skip },
      async () => {
        await check(
          fc.asyncProperty(
            requestArbitrary(() => ids),
            async (request) => {
              assertWellFormedAnswer(await send(t, request));
            },
          ),
        );
        await reseed();
      },
    );

    it(
      `never answers 5xx to a create with an Idempotency-Key, whatever the body (${RUNS} runs)`,
      { skip },
      async () => {
        const create = fc.record({
          method: fc.constant('POST'),
          path: fc.constant('/api/messages'),
          query: fc.constant(''),
          headers: fc.record({
            'content-type': fc.constantFrom('application/json', 'application/json; charset=utf-8'),
            'idempotency-key': idempotencyKey,
          }),
          body: hostileBody,
        });
        await check(
          fc.asyncProperty(create, async (request) => {
            assertWellFormedAnswer(await send(t, request));
          }),
        );
        await reseed();
      },
    );

    it(`changes nothing stored when it rejects a write (${RUNS} runs)`, { skip }, async () => {
      const writes = fc.constantFrom('POST', 'PUT', 'PUT', 'DELETE');
      const writeTarget = fc.oneof(
        fc.constant(null).map(() => `/api/messages/${ids[ids.length - 1] ?? ''}`),
        fc.constant('/api/messages'),
        pathArbitrary(() => ids),
      );
      const write = fc.record({
        method: writes,
        path: writeTarget,
        query: queryString,
        headers: hostileHeaders,
        body: hostileBody,
      });
      await check(
        fc.asyncProperty(write, async (request) => {
          const before = await listAll(t);
          const answer = await send(t, request);
          assertWellFormedAnswer(answer);
          const after = await listAll(t);
          if (answer.status >= 400)
            assert.deepEqual(
              after,
              before,
              `${answer.method} ${answer.url} -> ${answer.status} changed the store`,
            );
          if (after.length < 3) await reseed();
          else ids = after.map((m) => m.id);
        }),
      );
    });

    it(`returns valid text byte for byte (${RUNS} runs)`, { skip }, async () => {
      await check(
        fc.asyncProperty(
          validAuthor,
          validContent,
          validContent,
          validRoom,
          async (author, content, edit, room) => {
            const created = await t.app.http.inject({
              method: 'POST',
              url: '/api/messages',
              payload: { author, content, room },
            });
            assert.equal(created.statusCode, 201, created.body.slice(0, 300));
            const message = created.json<Message>();
            assert.equal(message.author, author);
            assert.equal(message.content, content);
            assert.equal(message.room, room);
            const got = await t.app.http.inject({ url: `/api/messages/${message.id}` });
            assert.equal(Buffer.compare(got.rawPayload, Buffer.from(JSON.stringify(message))), 0);
            const put = await t.app.http.inject({
              method: 'PUT',
              url: `/api/messages/${message.id}`,
              payload: { ...message, content: edit },
            });
            assert.equal(put.statusCode, 200, put.body.slice(0, 300));
            assert.equal(put.json<Message>().content, edit);
            const listed = await t.app.http.inject({
              url: `/api/messages?room=${room}&order=desc&limit=1`,
            });
            const [latest] = listed.json<Message[]>();
            assert.equal(latest?.content, edit);
            assert.equal(latest?.author, author);
            await t.app.http.inject({ method: 'DELETE', url: `/api/messages/${message.id}` });
          },
        ),
      );
    });
  });

  describe(`hostile credentials, property-based [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);
    let t: TestApp;
    let good: string;
    before(async () => {
      if (skip) return;
      t = await startTestApp(engine, AUTH);
      await t.listen();
      good = await token({ sub: 'ada' });
    });
    after(async () => t?.close());

    it(
      `lets no generated credential past 401, and never answers 5xx (${RUNS} runs)`,
      { skip },
      async () => {
        const b64 = fc.string({
          unit: char(
            [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].map((c) =>
              c.charCodeAt(0),
            ),
          ),
          maxLength: 60,
        });
        const forged = fc.oneof(
          fc.tuple(b64, b64, b64).map((parts) => parts.join('.')),
          // A real token with one character changed: only an equivalent encoding may pass.
          fc.tuple(fc.nat(), fc.constantFrom(...'AQgw-_xyz.'.split(''))).map(([at, c]) => {
            const i = at % good.length;
            return `${good.slice(0, i)}${c}${good.slice(i + 1)}`;
          }),
          headerValue,
        );
        const credential = fc.record({
          where: fc.constantFrom('header', 'bearer', 'query', 'both'),
          value: forged,
          path: fc.constantFrom(
            '/api/messages',
            '/api/events',
            `/api/messages/00000000-0000-7000-8000-000000000000`,
          ),
          method: fc.constantFrom('GET', 'POST', 'DELETE'),
        });
        await check(
          fc.asyncProperty(credential, async ({ where, value, path, method }) => {
            const headers: Record<string, string> = {};
            if (where === 'header') headers.authorization = value;
            if (where === 'bearer' || where === 'both') Object.assign(headers, bearer(value));
            const query =
              where === 'query' || where === 'both'
                ? `?access_token=${encodeURIComponent(value)}`
                : '';
            const answer = await send(t, {
              method: path === '/api/events' ? 'GET' : method,
              path,
              query,
              headers,
              body: method === 'POST' ? JSON.stringify({ content: 'forged' }) : undefined,
            });
            assertWellFormedAnswer(answer);
            if (answer.status === 401) {
              assert.match(
                String(answer.headers['www-authenticate']),
                /^Bearer( error="invalid_token")?/,
              );
            } else if (answer.status !== 400) {
              // Past authentication: only a token that still verifies, i.e. the real one.
              const sent = where === 'header' ? value.replace(/^Bearer +/i, '') : value;
              const { payload } = await import('jose').then((jose) =>
                jose.jwtVerify(sent, new TextEncoder().encode(AUTH.authJwtSecret!)),
              );
              assert.equal(payload.sub, 'ada');
            }
          }),
        );
        const unchanged = await listAll(t, bearer(good));
        assert.ok(unchanged.every((m) => m.author === 'ada'));
      },
    );
  });
}
