/**
 * The classic attacks, by hand, on both engines: SQL injection in every field
 * and parameter, path traversal in ids and paths, prototype pollution,
 * header injection through values that reach response headers, and CR/LF in
 * stored text that must never break the event stream's framing. Token
 * tampering is in test/auth/authentication.test.ts and test/auth/jwks.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Message } from '../../src/domain/message.ts';
import { changeEvents, connectSse } from '../events/sse-client.ts';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  LONGEST_TEXTS,
  SPECIAL_TEXTS,
  assertWellFormedAnswer,
  listAll,
  rawRequest,
} from './hostile-support.ts';

const SQL = SPECIAL_TEXTS.slice(0, 10);

/** A valid author made of the text's first code points (control characters dropped). */
function authorFrom(text: string): string {
  const head = [...text.replace(/\p{Cc}/gu, '')].slice(0, 30).join('').trim();
  return head === '' ? 'x' : head;
}

for (const engine of engines) {
  describe(`hostile input by hand [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);
    let t: TestApp;
    let seeded: Message[];

    before(async () => {
      if (skip) return;
      t = await startTestApp(engine, { eventsHeartbeatMs: 200 });
      await t.listen();
      seeded = [];
      for (const content of ['first', 'second', 'third']) {
        const response = await t.app.http.inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'seed', content, room: 'seed' },
        });
        seeded.push(response.json<Message>());
      }
    });
    after(async () => t?.close());

    const inject = async (options: InjectOptions) => {
      const response = await t.app.http.inject(options);
      assertWellFormedAnswer({
        method: options.method ?? 'GET',
        url: String(options.url),
        status: response.statusCode,
        headers: response.headers,
        body: response.body,
      });
      return response;
    };

    it('stores SQL in author and content as plain text, byte for byte', { skip }, async () => {
      for (const text of SQL) {
        const created = await inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: text.slice(0, 64), content: text, room: 'sql' },
        });
        assert.equal(created.statusCode, 201, created.body);
        const message = created.json<Message>();
        assert.equal(message.content, text);
        assert.equal(message.author, text.slice(0, 64));
        const got = await inject({ url: `/api/messages/${message.id}` });
        assert.equal(got.json<Message>().content, text);
        const edited = await inject({
          method: 'PUT',
          url: `/api/messages/${message.id}`,
          payload: { content: `${text} (edited)`, author: text.slice(0, 64) },
        });
        assert.equal(edited.statusCode, 200, edited.body);
        assert.equal(edited.json<Message>().content, `${text} (edited)`);
      }
      // Everything is still there, and nothing else appeared.
      const all = await listAll(t);
      for (const m of seeded) assert.ok(all.some((x) => x.id === m.id && x.content === m.content));
      assert.equal(all.filter((m) => m.room === 'sql').length, SQL.length);
    });

    it(
      'refuses SQL in room, ids and every query parameter without touching the store',
      { skip },
      async () => {
        const before = await listAll(t);
        for (const text of SQL) {
          const badRoom = await inject({
            method: 'POST',
            url: '/api/messages',
            payload: { author: 'x', content: 'x', room: text },
          });
          assert.equal(badRoom.statusCode, 400);
          const q = encodeURIComponent(text);
          for (const url of [
            `/api/messages?room=${q}`,
            `/api/messages?limit=${q}`,
            `/api/messages?order=${q}`,
            `/api/messages?after=${q}`,
            `/api/messages?before=${q}`,
            `/api/messages?id=${q}`,
            `/api/messages?id=${seeded[0]!.id}&id=${q}`,
            `/api/events?since=${q}`,
            `/api/events?room=${q}`,
          ]) {
            assert.equal((await inject({ url })).statusCode, 400, url);
          }
          for (const method of ['GET', 'PUT', 'DELETE'] as const) {
            const response = await inject({
              method,
              url: `/api/messages/${q}`,
              ...(method === 'PUT' ? { payload: { content: 'x' } } : {}),
            });
            assert.equal(response.statusCode, 404, `${method} ${text}`);
          }
          const lastEventId = await inject({
            url: '/api/events',
            headers: { 'last-event-id': text },
          });
          assert.equal(lastEventId.statusCode, 400);
          // A key is an opaque string: SQL in it is just a key.
          const keyed = await inject({
            method: 'POST',
            url: '/api/messages',
            headers: { 'idempotency-key': text.replace(/[^\x20-\x7e]/g, '?') },
            payload: { author: 'x', content: 'y', room: 'k' },
          });
          assert.equal(keyed.statusCode, 201);
          await inject({ method: 'DELETE', url: `/api/messages/${keyed.json<Message>().id}` });
        }
        // Unknown parameters are ignored, whatever they hold.
        const ignored = await inject({
          url: `/api/messages?${encodeURIComponent(SQL[0]!)}=${encodeURIComponent(SQL[1]!)}`,
        });
        assert.equal(ignored.statusCode, 200);
        assert.deepEqual(await listAll(t), before);
      },
    );

    it('filters rooms exactly: no LIKE wildcards, no case folding', { skip }, async () => {
      for (const room of ['a_c', 'abc', 'aXc', 'A_C', 'a.c']) {
        await inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'r', content: room, room },
        });
      }
      for (const room of ['a_c', 'a.c', 'abc']) {
        const list = (await inject({ url: `/api/messages?room=${room}` })).json<Message[]>();
        assert.deepEqual(
          list.map((m) => m.content),
          [room],
        );
      }
    });

    it('answers path traversal in ids with 404, never a file', { skip }, async () => {
      const paths = [
        '/api/messages/..%2f..%2fetc%2fpasswd',
        '/api/messages/..%2F..%2F..%2Fpackage.json',
        '/api/messages/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
        '/api/messages/%252e%252e%252fetc%252fpasswd',
        '/api/messages/....%2f%2f....%2f%2fetc%2fpasswd',
        '/api/messages/..%5c..%5cwindows%5cwin.ini',
        '/api/messages/%c0%ae%c0%ae%2fetc%2fpasswd',
        '/api/messages/%00',
        '/api/messages/..%00',
        `/api/messages/${seeded?.[0]?.id ?? ''}%00`,
        `/api/messages/${seeded?.[0]?.id ?? ''}%2f..`,
      ];
      for (const path of paths) {
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const answer = await rawRequest(t.url, {
            method,
            path,
            ...(method === 'PUT'
              ? { headers: { 'content-type': 'application/json' }, body: '{"content":"x"}' }
              : {}),
          });
          assertWellFormedAnswer(answer);
          assert.equal(answer.status, 404, `${method} ${path}: ${answer.body}`);
        }
      }
      // Outside the API too: the static page never serves a file outside public/.
      for (const path of [
        '/..%2fpackage.json',
        '/%2e%2e/package.json',
        '/%2e%2e%2fpackage.json',
        '/../package.json',
        '/..%5cpackage.json',
        '/docs/static/..%2f..%2f..%2fpackage.json',
        '/docs/static/%2e%2e/%2e%2e/package.json',
        '/style.css%00.html',
      ]) {
        const answer = await rawRequest(t.url, { method: 'GET', path });
        assertWellFormedAnswer(answer);
        assert.ok(!answer.body.includes('"dependencies"'), `${path} served package.json`);
        assert.ok(answer.status === 404 || answer.status === 400, `${path}: ${answer.status}`);
      }
      assert.deepEqual(
        (await listAll(t)).filter((m) => m.room === 'seed'),
        seeded,
      );
    });

    it('refuses prototype pollution in bodies and survives it in queries', { skip }, async () => {
      for (const payload of [
        '{"__proto__":{"admin":true},"author":"x","content":"x"}',
        '{"constructor":{"prototype":{"admin":true}},"author":"x","content":"x"}',
        '{"author":"x","content":"x","nested":{"__proto__":{"polluted":1}}}',
      ]) {
        const response = await inject({
          method: 'POST',
          url: '/api/messages',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        assert.equal(response.statusCode, 400, payload);
      }
      for (const query of [
        '__proto__[admin]=1',
        'constructor[prototype][admin]=1',
        '__proto__=x&room=seed',
      ]) {
        const response = await inject({ url: `/api/messages?${query}` });
        assert.ok(response.statusCode === 200 || response.statusCode === 400, query);
      }
      assert.equal(({} as Record<string, unknown>).admin, undefined);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    it('refuses deeply nested and oddly typed bodies with a 400', { skip }, async () => {
      const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
      const deepObject = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
      for (const payload of [
        deep,
        deepObject,
        '{"author":"x","content":"x","content":{"$gt":""}}',
        '{"author":{"$ne":null},"content":"x"}',
        '{"author":["x"],"content":"x"}',
        '{"author":"x","content":1e309}',
        '{"author":"x","content":"\\ud800"}',
        '{"author":"\\udfff","content":"x"}',
        '{"author":"x","content":"a\\u0000b"}',
        'null',
        '[]',
        '"string"',
      ]) {
        const response = await inject({
          method: 'POST',
          url: '/api/messages',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        assert.equal(response.statusCode, 400, payload.slice(0, 60));
      }
      for (const bytes of [
        Buffer.from([0x7b, 0x22, 0xc0, 0xae, 0x22, 0x7d]),
        Buffer.from('{"author":"x","content":"\xff\xfe"}', 'latin1'),
        Buffer.from([0xed, 0xa0, 0x80]),
      ]) {
        const response = await inject({
          method: 'POST',
          url: '/api/messages',
          headers: { 'content-type': 'application/json' },
          payload: bytes,
        });
        assert.equal(response.statusCode, 400);
      }
    });

    it(
      'keeps every special text and every 4000-code-point text byte for byte',
      { skip },
      async () => {
        for (const content of [...SPECIAL_TEXTS, ...LONGEST_TEXTS]) {
          const created = await inject({
            method: 'POST',
            url: '/api/messages',
            payload: { author: authorFrom(content), content, room: 'bytes' },
          });
          assert.equal(created.statusCode, 201, created.body.slice(0, 200));
          const message = created.json<Message>();
          assert.equal(message.content, content);
          assert.equal(Buffer.compare(Buffer.from(message.content), Buffer.from(content)), 0);
          const got = await inject({ url: `/api/messages/${message.id}` });
          assert.equal(got.json<Message>().content, content);
        }
        const listed = (await inject({ url: '/api/messages?room=bytes' })).json<Message[]>();
        assert.deepEqual(
          listed.map((m) => m.content),
          [...SPECIAL_TEXTS, ...LONGEST_TEXTS],
        );
        const tooLong = await inject({
          method: 'POST',
          url: '/api/messages',
          payload: { author: 'x', content: `${LONGEST_TEXTS[1]!}😀` },
        });
        assert.equal(tooLong.statusCode, 400);
      },
    );

    it('never lets a header value from the client reach a response header', { skip }, async () => {
      for (const id of [
        'abc\u00e9',
        'a b',
        'a%0d%0aSet-Cookie:%20x=1',
        'x'.repeat(200),
        '<script>',
        '',
      ]) {
        const response = await inject({
          url: '/api/messages?limit=1',
          headers: { 'x-request-id': id },
        });
        assert.notEqual(response.headers['x-request-id'], id);
        assert.equal(response.headers['set-cookie'], undefined);
      }
      const kept = await inject({
        url: '/api/messages?limit=1',
        headers: { 'x-request-id': 'trace-42.a_b~c:d' },
      });
      assert.equal(kept.headers['x-request-id'], 'trace-42.a_b~c:d');

      // CR/LF in a key never becomes a header: the key is refused.
      for (const key of ['a\r\nSet-Cookie: x=1', 'a\nb', 'caf\u00e9', '']) {
        const response = await inject({
          method: 'POST',
          url: '/api/messages',
          headers: { 'idempotency-key': key },
          payload: { author: 'x', content: 'x' },
        });
        assert.equal(response.statusCode, 400, JSON.stringify(key));
        assert.equal(response.json().errors[0].header, 'idempotency-key');
      }

      // Link is built from the parsed query only: unknown parameters never reach it.
      const paged = await inject({
        url: '/api/messages?room=seed&limit=1&evil=%0d%0aSet-Cookie:%20x=1&x=%3Cscript%3E',
      });
      const link = String(paged.headers.link);
      assert.match(link, /^<\/api\/messages\?[A-Za-z0-9_.~%=&-]+>; rel="next"$/);
      assert.ok(!/evil|script|cookie/i.test(link), link);
    });

    it(
      'keeps CR/LF in stored text inside one data line of the event stream',
      { skip },
      async () => {
        const seq = Number((await inject({ url: '/api/messages?limit=1' })).headers['event-seq']);
        const client = await connectSse(`${t.url}/api/events?since=${seq}`);
        try {
          assert.equal(client.status, 200);
          const texts = [
            'one\r\ntwo',
            'data: fake\n\nevent: message.deleted\nid: 999999\n\n',
            '\r\r\r\n\n\nx',
            'id: 1\revent: reset\rdata: {}\r\r',
            ': comment\nretry: 1\n',
            '\u2028\u2029\u0085'.replace('\u0085', 'x'),
          ];
          const created: Message[] = [];
          for (const content of texts) {
            const response = await inject({
              method: 'POST',
              url: '/api/messages',
              payload: { author: 'framing', content, room: 'framing' },
            });
            assert.equal(response.statusCode, 201);
            created.push(response.json<Message>());
          }
          const edited = await inject({
            method: 'PUT',
            url: `/api/messages/${created[0]!.id}`,
            payload: { content: 'edited\n\nevent: message.created\ndata: {}\n\n' },
          });
          assert.equal(edited.statusCode, 200);
          await client.waitFor((c) => changeEvents(c).length >= texts.length + 1, 'every change');
          const events = changeEvents(client);
          assert.equal(events.length, texts.length + 1, client.raw.slice(-2000));
          assert.deepEqual(
            events.map((e) => e.event),
            [...texts.map(() => 'message.created'), 'message.updated'],
          );
          assert.deepEqual(
            events.map((e) => e.data.content),
            [...texts, 'edited\n\nevent: message.created\ndata: {}\n\n'],
          );
          for (let i = 1; i < events.length; i++) assert.ok(events[i]!.seq > events[i - 1]!.seq);
          assert.ok(!client.events.some((e) => e.event === 'reset'), 'no forged reset');
          assert.ok(!client.ids.includes('999999') && !client.ids.includes('1'), 'no forged id');
        } finally {
          client.close();
        }
      },
    );
  });
}
