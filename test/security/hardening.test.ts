/**
 * Hardening: security headers with a CSP that the page and /docs work under
 * (checked in Chromium), CORS off by default and by origin list when on,
 * slow-client timeouts, a cap on connections (below the open-file limit,
 * refusals logged), and problem documents for what Node or the router refuse
 * before a route runs.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { launchChromium } from '../support/browser.ts';
import { sqliteEngine } from '../support/engines.ts';
import { CHROMIUM, chromiumAvailable, skipUnless } from '../support/prerequisites.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { AUTH, bearer, token } from '../auth/tokens.ts';
import { eventually } from '../events/event-helpers.ts';

const ORIGIN = 'https://chat.example';

/** Sends raw bytes on a fresh connection; resolves with everything received until the server closes it. */
function rawExchange(url: string, write: (socket: Socket) => void): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => write(socket));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve(received) : reject(error),
    );
    socket.on('close', () => resolve(received));
  });
}

/** A log stream for an app, and the JSON lines it received. */
function logLines() {
  const lines: Record<string, unknown>[] = [];
  const stream = new PassThrough();
  let partial = '';
  stream.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop()!;
    for (const part of parts)
      if (part.trim() !== '') lines.push(JSON.parse(part) as Record<string, unknown>);
  });
  return {
    stream,
    matching: (msg: RegExp) => lines.filter((line) => msg.test(String(line.msg))),
  };
}

function problemOf(rawResponse: string, status: number): Record<string, unknown> {
  const [head = '', body = ''] = rawResponse.split('\r\n\r\n');
  assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), rawResponse);
  assert.match(head, /content-type: application\/problem\+json/i);
  const problem = JSON.parse(body) as Record<string, unknown>;
  assert.equal(problem.status, status);
  for (const field of ['type', 'title', 'detail', 'instance']) {
    assert.equal(typeof problem[field], 'string');
  }
  return problem;
}

describe('hardening', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteEngine, { headersTimeoutMs: 1000, requestTimeoutMs: 1500 });
    await t.listen();
  });
  after(async () => t?.close());

  it('sends nosniff and a deny-all CSP, and no page headers, on every machine answer', async () => {
    for (const url of [
      '/api/messages',
      '/api/messages/00000000-0000-7000-8000-000000000000',
      '/api/openapi.json',
      '/healthz',
      '/readyz',
      '/metrics',
    ]) {
      const response = await t.app.http.inject({ url });
      assert.equal(response.headers['x-content-type-options'], 'nosniff', url);
      assert.equal(
        response.headers['content-security-policy'],
        "default-src 'none'; frame-ancestors 'none'",
        url,
      );
      for (const pageOnly of ['x-frame-options', 'referrer-policy', 'cross-origin-opener-policy']) {
        assert.equal(response.headers[pageOnly], undefined, `${url}: ${pageOnly}`);
      }
    }
  });

  it("sends helmet's full set and a strict CSP on the page, the docs and unknown paths", async () => {
    for (const url of ['/', '/docs', '/no-such-page']) {
      const response = await t.app.http.inject({ url });
      assert.equal(response.statusCode, url === '/no-such-page' ? 404 : 200, url);
      const csp = String(response.headers['content-security-policy']);
      for (const directive of [
        "default-src 'self'",
        "script-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "connect-src 'self'",
      ]) {
        assert.ok(csp.split(';').includes(directive), `${url}: ${directive} in ${csp}`);
      }
      const styles = csp.split(';').find((d) => d.startsWith('style-src '));
      // /docs adds the hash of Swagger UI's one <style> element, nothing wider.
      assert.match(String(styles), /^style-src 'self'( 'sha256-[A-Za-z0-9+/=]+')?$/);
      assert.ok(!csp.includes('unsafe-inline') && !csp.includes('unsafe-eval'), csp);
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.headers['x-frame-options'], 'DENY');
      assert.equal(response.headers['referrer-policy'], 'no-referrer');
    }
  });

  it('loads the page and /docs in Chromium without a single CSP violation', async (ctx) => {
    const skip = skipUnless(chromiumAvailable(), `Chromium at ${CHROMIUM}`);
    if (skip) return ctx.skip(skip);
    const browser = await launchChromium();
    try {
      for (const [path, ready] of [
        ['/', '#join'],
        ['/docs', '.opblock-summary'],
      ] as const) {
        const page = await browser.newPage();
        await page.addInitScript(`
          globalThis.cspViolations = [];
          document.addEventListener('securitypolicyviolation', (e) => globalThis.cspViolations.push(e.violatedDirective));
        `);
        const problems: string[] = [];
        page.on('console', (message) => {
          if (/Content Security Policy|Refused to/i.test(message.text()))
            problems.push(message.text());
        });
        page.on('pageerror', (error) => problems.push(error.message));
        await page.goto(`${t.url}${path}`);
        await page.locator(ready).first().waitFor({ timeout: 15_000 });
        // Done when every resource has loaded and, on /docs, Swagger UI has rendered the
        // operations (its inline <style> goes in before that).
        await page.waitForLoadState('load');
        if (path === '/docs') {
          await page.waitForFunction(
            'document.querySelectorAll(".opblock-summary").length >= 5',
            undefined,
            { timeout: 15_000 },
          );
        }
        // A violation event is queued as a task: one round trip through the page's task queue
        // delivers any still pending, then read what the page itself recorded.
        await page.evaluate('new Promise((resolve) => setTimeout(resolve))');
        const violations = await page.evaluate('globalThis.cspViolations.length');
        assert.deepEqual(problems, [], `${path}: ${problems.join('\n')}`);
        assert.equal(violations, 0);
        if (path === '/docs') {
          assert.ok((await page.locator('.opblock-summary').count()) >= 5, 'the operations show');
        }
        await page.close();
      }
    } finally {
      await browser.close();
    }
  });

  it('answers cross-origin requests without CORS headers by default', async () => {
    const response = await t.app.http.inject({ url: '/api/messages', headers: { origin: ORIGIN } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['access-control-allow-origin'], undefined);
    const preflight = await t.app.http.inject({
      method: 'OPTIONS',
      url: '/api/messages',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
  });

  it('allows the listed origins, exposing the headers clients need, with auth on', async () => {
    const app = await startTestApp(sqliteEngine, { ...AUTH, corsOrigins: [ORIGIN] });
    try {
      const preflight = await app.app.http.inject({
        method: 'OPTIONS',
        url: '/api/messages',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'PUT',
          'access-control-request-headers':
            'authorization, content-type, if-match, idempotency-key',
        },
      });
      assert.ok(preflight.statusCode === 204 || preflight.statusCode === 200, preflight.body);
      assert.equal(preflight.headers['access-control-allow-origin'], ORIGIN);
      assert.match(String(preflight.headers['access-control-allow-methods']), /PUT/);
      const allowed = String(preflight.headers['access-control-allow-headers']).toLowerCase();
      for (const name of [
        'authorization',
        'content-type',
        'if-match',
        'idempotency-key',
        'last-event-id',
      ]) {
        assert.ok(allowed.includes(name), `${name} allowed`);
      }

      const refused = await app.app.http.inject({
        url: '/api/messages',
        headers: { origin: ORIGIN },
      });
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.headers['access-control-allow-origin'], ORIGIN, 'a 401 is readable');

      const ok = await app.app.http.inject({
        url: '/api/messages',
        headers: { origin: ORIGIN, ...bearer(await token()) },
      });
      assert.equal(ok.headers['access-control-allow-origin'], ORIGIN);
      assert.match(String(ok.headers.vary), /Origin/i);
      const exposed = String(ok.headers['access-control-expose-headers'])
        .toLowerCase()
        .split(/,\s*/);
      for (const name of [
        'location',
        'etag',
        'link',
        'retry-after',
        'ratelimit',
        'ratelimit-policy',
        'event-seq',
        'idempotent-replayed',
        'x-request-id',
      ]) {
        assert.ok(exposed.includes(name), `${name} exposed`);
      }

      const other = await app.app.http.inject({
        url: '/api/messages',
        headers: { origin: 'https://evil.example', ...bearer(await token()) },
      });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
    } finally {
      await app.close();
    }
  });

  it('cuts off a client that sends its headers too slowly, with a 408 problem', async () => {
    const response = await rawExchange(t.url, (socket) =>
      socket.write('GET /api/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '),
    );
    const problem = problemOf(response, 408);
    assert.equal(problem.type, '/problems/request-timeout');
  });

  it('cuts off a client that sends its body too slowly, with a 408 problem', async () => {
    const response = await rawExchange(t.url, (socket) =>
      socket.write(
        'POST /api/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100\r\n\r\n{"content":',
      ),
    );
    problemOf(response, 408);
  });

  it('answers a request it cannot parse, or headers too large, with a problem', async () => {
    problemOf(await rawExchange(t.url, (s) => s.write('NOT HTTP AT ALL\r\n\r\n')), 400);
    problemOf(
      await rawExchange(t.url, (s) =>
        s.write('GET /api/messages HTTP/1.1\r\nHost: x\r\nX-Bad: a\rb\r\n\r\n'),
      ),
      400,
    );
    const big = await rawExchange(t.url, (s) =>
      s.write(`GET /api/messages HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    assert.equal(problemOf(big, 431).type, '/problems/headers-too-large');
  });

  it('answers a path the router cannot decode with a 404 problem', async () => {
    for (const url of [
      '/api/messages/%ZZ',
      '/api/messages/%E0%A4%A',
      `/api/messages/${'a'.repeat(500)}`,
    ]) {
      const response = await t.app.http.inject({ url });
      assert.equal(response.statusCode, 404, `${url}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.equal(response.headers['cache-control'], 'no-cache');
    }
  });

  it('caps open connections, and logs the refusals at most once per interval', async () => {
    const log = logLines();
    const capped = await startTestApp(
      sqliteEngine,
      { maxConnections: 2, logLevel: 'warn' },
      { logStream: log.stream },
    );
    const sockets: Socket[] = [];
    try {
      const url = new URL(await capped.listen());
      const open = () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
          socket.on('error', reject);
          sockets.push(socket);
        });
      const first = await open();
      await open();
      // Let the server register both before the third arrives.
      const ask = (socket: Socket) =>
        new Promise<string>((resolve) => {
          let text = '';
          socket.setEncoding('utf8');
          socket.on('data', (chunk: string) => {
            text += chunk;
            if (text.includes('\r\n\r\n')) resolve(text);
          });
          socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        });
      assert.match(await ask(first), /^HTTP\/1\.1 200/);
      for (let i = 0; i < 3; i++) {
        const refused = await rawExchange(url.toString(), (socket) => {
          sockets.push(socket);
          socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        });
        assert.equal(refused, '', 'the connection over the cap is closed without an answer');
      }
      await eventually(
        () => log.matching(/MAX_CONNECTIONS reached/).length > 0,
        'the refusal logged',
      );
      const lines = log.matching(/MAX_CONNECTIONS reached/);
      assert.equal(lines.length, 1, 'three refusals, one line');
      assert.equal(lines[0]!.level, 40, 'a warning');
      assert.equal(lines[0]!.maxConnections, 2);
    } finally {
      for (const socket of sockets) socket.destroy();
      await capped.close();
    }
  });

  it('keeps MAX_CONNECTIONS below the open-file limit, and says so once at start', async () => {
    const log = logLines();
    const clamped = await startTestApp(
      sqliteEngine,
      { maxConnections: 20_000, logLevel: 'warn' },
      { logStream: log.stream, openFileLimit: 1024 },
    );
    try {
      const cap = clamped.app.http.server.maxConnections;
      assert.ok(cap < 1024 && cap > 0, `cap ${cap} below the open-file limit`);
      const lines = log.matching(/MAX_CONNECTIONS lowered/);
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.maxConnections, cap);
      assert.equal(lines[0]!.requested, 20_000);
    } finally {
      await clamped.close();
    }
    const fits = await startTestApp(
      sqliteEngine,
      { maxConnections: 500, logLevel: 'warn' },
      { logStream: log.stream, openFileLimit: 1024 },
    );
    try {
      assert.equal(fits.app.http.server.maxConnections, 500, 'a cap that fits is kept');
      assert.equal(log.matching(/MAX_CONNECTIONS lowered/).length, 1, 'and not logged');
    } finally {
      await fits.close();
    }
  });
});
