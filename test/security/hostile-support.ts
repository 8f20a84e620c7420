/** What the hostile-input suites share: nasty texts, and the checks every answer must pass. */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { Message } from '../../src/domain/message.ts';
import type { TestApp } from '../support/test-app.ts';

/** Text that must be stored and returned exactly as sent. */
export const SPECIAL_TEXTS: readonly string[] = [
  "'; DROP TABLE messages; --",
  "' OR '1'='1",
  '" OR ""="',
  "1'; SELECT pg_sleep(10); --",
  "') UNION SELECT name, sql FROM sqlite_master --",
  "Robert'); DELETE FROM change_log WHERE ('1'='1",
  "%_\\%\\_ LIKE '%' ESCAPE '\\'",
  '$1 $$ $tag$ ? ?1 :name @p0',
  "\\'; \\\\'; \\x27 \\u0027",
  '/* comment */ -- comment # comment',
  '😀 👩‍👩‍👧‍👦 🏳️‍🌈 🇺🇦 👍🏽',
  'Z̴̡̪̫͖̥̔͌̈́a̸̧̛͚̹͔l̵̢̛̜̟g̸̣̀̂ő̶̧͈',
  'e\u0301 vs \u00e9 (NFD vs NFC)',
  'مرحبا بالعالم — שלום עולם',
  '\u202eevil\u202c \u2066isolate\u2069 \u200f\u200e',
  'zero\u200bwidth\u200djoiner\u2060word\ufeffbom',
  'line\r\nbreaks\rand\nmore\tand tabs',
  'data: injected\n\nevent: message.deleted\nid: 999999\n\n',
  '\u2028line separator\u2029paragraph separator',
  '<script>alert(1)</script><img src=x onerror=alert(1)>',
  '{"json":"inside"} [1,2] null true',
  '\uffff \ufffe \ufffd noncharacters',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈 𝄞 astral',
  '..%2f..%2fetc%2fpasswd ../../etc/passwd',
];

/** Strings of exactly 4000 code points, the longest content allowed. */
export const LONGEST_TEXTS: readonly string[] = [
  'x'.repeat(4000),
  '😀'.repeat(4000),
  'e\u0301'.repeat(2000),
  'ש'.repeat(4000),
  `${"'".repeat(1999)};${'"'.repeat(2000)}`,
];

export function codePoints(text: string): number {
  return [...text].length;
}

/** Category Cc, except tab, LF and CR. */
function isRefusedControl(ch: string): boolean {
  const c = ch.codePointAt(0)!;
  return (c <= 0x1f && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0x7f && c <= 0x9f);
}

/** The rules for content (docs/concepts.md): 1-4000 code points, not blank, no Cc but tab/LF/CR, no lone surrogate. */
export function isValidContent(text: string): boolean {
  const n = codePoints(text);
  return (
    n >= 1 &&
    n <= 4000 &&
    /[^\p{White_Space}]/u.test(text) &&
    ![...text].some(isRefusedControl) &&
    !/\p{Cs}/u.test(text)
  );
}

/** The rules for author: 1-64 code points, not blank, no control characters, no lone surrogate. */
export function isValidAuthor(text: string): boolean {
  const n = codePoints(text);
  return (
    n >= 1 &&
    n <= 64 &&
    /[^\p{White_Space}]/u.test(text) &&
    !/\p{Cc}/u.test(text) &&
    !/\p{Cs}/u.test(text)
  );
}

export interface Answer {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  readonly body: string;
}

/** The most a problem may weigh, whatever the request (it may be kept for an Idempotency-Key). */
export const MAX_PROBLEM_BYTES = 8192;

/**
 * Never a 5xx; every error (but a bodiless HEAD) an RFC 9457 problem with
 * type, title, status, detail and instance, of bounded size, each validation
 * entry naming exactly one of pointer, parameter, header.
 */
export function assertWellFormedAnswer(answer: Answer): void {
  const where = `${answer.method} ${answer.url} -> ${answer.status}: ${answer.body.slice(0, 300)}`;
  assert.ok(answer.status < 500, `no 5xx: ${where}`);
  assert.ok(answer.status >= 200, where);
  const requestId = String(answer.headers['x-request-id'] ?? '');
  assert.match(requestId, /^[A-Za-z0-9._~:-]{1,128}$/, `x-request-id: ${where}`);
  if (answer.status < 400 || answer.method === 'HEAD') return;
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/, where);
  assert.ok(Buffer.byteLength(answer.body) <= MAX_PROBLEM_BYTES, `a small problem: ${where}`);
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  assert.equal(typeof problem.type, 'string', where);
  assert.match(String(problem.type), /^\/problems\/[a-z-]+$/, where);
  assert.equal(typeof problem.title, 'string', where);
  assert.equal(problem.status, answer.status, where);
  assert.equal(typeof problem.detail, 'string', where);
  assert.equal(typeof problem.instance, 'string', where);
  if (problem.errors !== undefined) {
    assert.ok(Array.isArray(problem.errors) && problem.errors.length > 0, where);
    assert.ok(problem.errors.length <= 20, `at most 20 entries: ${where}`);
    for (const entry of problem.errors as Record<string, unknown>[]) {
      const located = ['pointer', 'parameter', 'header'].filter((k) => k in entry);
      assert.equal(located.length, 1, `one locator in ${JSON.stringify(entry)}: ${where}`);
      assert.equal(typeof entry[located[0]!], 'string', where);
      assert.equal(typeof entry.detail, 'string', where);
    }
  }
}

export interface RawRequest {
  readonly method: string;
  /** Path and query, sent exactly as given. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: Buffer | string;
}

/**
 * One request over a real socket, the path sent byte for byte (no client-side
 * normalisation). An event stream that opens (200) is closed at once: only
 * its status and headers are kept.
 */
export function rawRequest(baseUrl: string, request: RawRequest): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port: Number(port),
        method: request.method,
        path: request.path,
        headers: { connection: 'close', ...request.headers },
        agent: false,
      },
      (res) => {
        const answer = (body: string): Answer => ({
          method: request.method,
          url: request.path,
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
        });
        if (res.statusCode === 200 && /event-stream/.test(String(res.headers['content-type']))) {
          resolve(answer(''));
          req.destroy();
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(answer(text)));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

/** Every stored message, through the API. */
export async function listAll(
  t: TestApp,
  headers: Record<string, string> = {},
): Promise<Message[]> {
  const response = await t.app.http.inject({ url: '/api/messages', headers });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<Message[]>();
}
