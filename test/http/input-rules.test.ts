/**
 * The field rules and bad input of every kind (docs/concepts.md, "Messages"):
 * always a 400 problem naming the field, never a 500, never silently changed.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertProblem, eachEngine, onlyError, type ContractApp } from './http-contract.ts';

/** POST with a raw body (text or bytes), as a client could send it. */
function postRaw(app: ContractApp, body: string | Buffer) {
  return app.inject({
    method: 'POST',
    url: '/api/messages',
    headers: { 'content-type': 'application/json' },
    payload: body,
  });
}

function post(app: ContractApp, body: Record<string, unknown>) {
  return postRaw(app, JSON.stringify({ author: 'ada', content: 'x', ...body }));
}

const EMOJI = '😀'; // one code point, two UTF-16 units, four UTF-8 bytes

eachEngine('field rules and bad input', (_engine, shared) => {
  /** Asserts a 400 validation problem whose one entry points at `field`. */
  async function refused(body: Record<string, unknown> | string | Buffer, field: string) {
    const app = shared();
    const response =
      typeof body === 'string' || Buffer.isBuffer(body)
        ? await postRaw(app, body)
        : await post(app, body);
    const problem = assertProblem(response, 400);
    if (field !== '')
      assert.equal(onlyError(problem).pointer, `#/${field}`, JSON.stringify(problem));
    return problem;
  }

  async function accepted(body: Record<string, unknown>) {
    const response = await post(shared(), body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json();
  }

  it('content: 4000 code points pass, 4001 fail (counted in code points, not UTF-16)', async () => {
    const created = await accepted({ content: EMOJI.repeat(4000) });
    assert.equal(created.content, EMOJI.repeat(4000));
    await refused({ content: EMOJI.repeat(4001) }, 'content');
    await accepted({ content: 'x'.repeat(4000) });
    await refused({ content: 'x'.repeat(4001) }, 'content');
  });

  it('author: 64 code points pass, 65 fail', async () => {
    assert.equal((await accepted({ author: EMOJI.repeat(64) })).author, EMOJI.repeat(64));
    await refused({ author: EMOJI.repeat(65) }, 'author');
    await accepted({ author: 'a'.repeat(64) });
    await refused({ author: 'a'.repeat(65) }, 'author');
  });

  it('room: 1-64 of A-Z a-z 0-9 _ . -', async () => {
    assert.equal((await accepted({ room: 'A-z_0.9' })).room, 'A-z_0.9');
    await accepted({ room: 'r'.repeat(64) });
    await refused({ room: 'r'.repeat(65) }, 'room');
    for (const room of [
      '',
      'with space',
      'slash/x',
      'caf\u00e9',
      'hash#',
      'a\nb',
      'ｆｕｌｌ',
      '😀',
    ]) {
      await refused({ room }, 'room');
    }
  });

  it('content and author must not be blank (Unicode White_Space)', async () => {
    const blanks = [
      ' ',
      '   ',
      '\u3000',
      '\u00a0',
      '\u2003\u2009',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u1680',
    ];
    for (const blank of blanks) {
      await refused({ content: blank }, 'content');
      await refused({ author: blank }, 'author');
    }
    await refused({ content: '' }, 'content');
    await refused({ author: '' }, 'author');
    for (const blank of [' \t\r\n ', '\n', '\t']) await refused({ content: blank }, 'content');
    await refused({ content: '\u0085' }, 'content');
    // Not White_Space: a zero-width space or joiner is content.
    await accepted({ content: '\u200b' });
    await accepted({ content: '  x  ' });
  });

  it('control characters (Cc) are refused, except tab, LF and CR in content', async () => {
    const controls = [0x00, 0x01, 0x08, 0x0b, 0x0c, 0x0e, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f];
    for (const code of controls) {
      const ch = String.fromCharCode(code);
      await refused({ content: `a${ch}b` }, 'content');
      await refused({ author: `a${ch}b` }, 'author');
    }
    for (const ch of ['\t', '\n', '\r']) await refused({ author: `a${ch}b` }, 'author');
    const created = await accepted({ content: 'a\tb\nc\r\nd\r' });
    assert.equal(created.content, 'a\tb\nc\r\nd\r');
    // Just outside the ranges: allowed.
    await accepted({ content: '\u00a0x\u00a1' });
  });

  it('a NUL byte is a 400, never a 500, escaped or raw', async () => {
    await refused({ content: 'a\u0000b' }, 'content');
    // A raw NUL inside a JSON string is not JSON at all.
    await refused(Buffer.from('{"author":"ada","content":"a\u0000b"}'), '');
    await refused(Buffer.from('{"author":"ada","content":"ab"}\u0000'), '');
  });

  /** A JSON object text with these members, values given as raw JSON text. */
  const rawObject = (members: Record<string, string>) =>
    `{${Object.entries(members)
      .map(([k, v]) => `"${k}":${v}`)
      .join(',')}}`;

  it('a lone surrogate escape is a 400 in every field', async () => {
    for (const bad of ['\\ud800', '\\udfff', 'a\\ud83d', '\\ude00x', '\\udc00\\ud800']) {
      for (const field of ['content', 'author', 'room']) {
        await refused(rawObject({ author: '"ada"', content: '"x"', [field]: `"${bad}"` }), field);
      }
      // As a field name it is an unknown field.
      await refused(rawObject({ author: '"ada"', content: '"x"', [bad]: '1' }), '');
    }
    // A proper pair is one code point.
    const created = await accepted({ content: '\ud83d\ude00' });
    assert.equal(created.content, EMOJI);
  });

  it('a lone surrogate in any field of a PUT is a 400', async () => {
    const app = shared();
    const message = await accepted({});
    for (const field of ['content', 'author', 'room', 'id', 'createdAt', 'updatedAt']) {
      const response = await app.inject({
        method: 'PUT',
        url: `/api/messages/${message.id}`,
        headers: { 'content-type': 'application/json' },
        payload: rawObject({ content: '"ok"', [field]: '"\\ud800"' }),
      });
      assertProblem(response, 400);
    }
    const unchanged = await app.inject({ url: `/api/messages/${message.id}` });
    assert.deepEqual(unchanged.json(), message);
  });

  it('a body that is not valid UTF-8 is a 400, never replaced with U+FFFD', async () => {
    const prefix = Buffer.from('{"author":"ada","content":"');
    const suffix = Buffer.from('"}');
    const invalid = [
      [0xff],
      [0xc0, 0xaf], // overlong '/'
      [0xe2, 0x82], // truncated
      [0xed, 0xa0, 0x80], // an encoded surrogate (CESU-8)
      [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
      [0x80],
    ];
    for (const bytes of invalid) {
      const problem = await refused(Buffer.concat([prefix, Buffer.from(bytes), suffix]), '');
      assert.equal(problem.type, '/problems/malformed-body');
    }
    const latin1Author = Buffer.concat([
      Buffer.from('{"content":"x","author":"'),
      Buffer.from('caf\u00e9', 'latin1'),
      suffix,
    ]);
    await refused(latin1Author, '');
    const list = await shared().inject({ url: '/api/messages?limit=1000' });
    assert.ok(!list.body.includes('\ufffd'), 'nothing was stored with a replacement character');
  });

  it('a UTF-8 byte order mark before the JSON is refused or ignored, never stored', async () => {
    const response = await postRaw(
      shared(),
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('{"author":"ada","content":"bom"}'),
      ]),
    );
    assert.ok([201, 400].includes(response.statusCode), response.body);
    if (response.statusCode === 201) assert.equal(response.json().content, 'bom');
  });

  it('wrong types are a 400 naming the field', async () => {
    const cases: [string, unknown][] = [
      ['content', 42],
      ['content', null],
      ['content', true],
      ['content', ['x']],
      ['content', { text: 'x' }],
      ['author', 1],
      ['author', null],
      ['room', 7],
      ['room', ['general']],
      ['room', null],
    ];
    for (const [field, value] of cases) await refused({ [field]: value }, field);
  });

  it('PUT: wrong types of the echoed fields are a 400 naming the field', async () => {
    const app = shared();
    const message = await accepted({});
    // Values as raw JSON text, so numbers too large for a double reach the server as sent.
    const cases: [string, string][] = [
      ['version', '"1"'],
      ['version', '1.5'],
      ['version', '0'],
      ['version', '1e400'],
      ['version', '1e20'],
      ['version', '9007199254740993'],
      ['updatedAt', '"yesterday"'],
      ['createdAt', '12'],
      ['id', '"not-an-id"'],
      ['room', '"bad room"'],
      ['author', '5'],
    ];
    for (const [field, value] of cases) {
      const raw = `{"content":"x","${field}":${value}}`;
      const response = await app.inject({
        method: 'PUT',
        url: `/api/messages/${message.id}`,
        headers: { 'content-type': 'application/json' },
        payload: raw,
      });
      const problem = assertProblem(response, 400);
      assert.equal(onlyError(problem).pointer, `#/${field}`, `${field}: ${raw}`);
    }
  });

  it('huge numbers and deep nesting are a 400, never a 500', async () => {
    await refused('{"author":"ada","content":1e400}', 'content');
    await refused('{"author":"ada","content":-1e400}', 'content');
    await refused(`{"author":"ada","content":${'9'.repeat(5000)}}`, 'content');
    // Nesting deeper than the parser allows is refused as malformed, before anything walks it.
    const depth = 20_000; // 40 KB: under the body limit
    for (const body of [
      `{"author":"ada","content":${'['.repeat(depth)}${']'.repeat(depth)}}`,
      `{"author":"ada","content":"x","n":${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}}`,
      `${'['.repeat(depth)}${']'.repeat(depth)}`,
      `{"author":"ada","content":${'['.repeat(33)}${']'.repeat(33)}}`,
    ]) {
      assertProblem(await postRaw(shared(), body), 400, 'malformed-body');
    }
    // Within the limit, a nested value is a field that breaks its rule.
    await refused(`{"author":"ada","content":${'['.repeat(31)}${']'.repeat(31)}}`, 'content');
    await refused(`{"author":"ada","content":"[[[{{\\"","x":"]]]}}"}`, 'x');
    const problem = await refused(`${'['.repeat(depth)}`, '');
    assert.equal(problem.status, 400);
  });

  it('unknown fields are refused, never dropped', async () => {
    for (const field of ['Content', 'AUTHOR', 'room ', 'id', 'extra', '', 'content\u0000']) {
      const body = JSON.stringify({ author: 'ada', content: 'x', [field]: 'v' });
      const problem = await refused(body, '');
      assert.ok(
        problem.errors?.some(
          (e) => e.pointer === `#/${field.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        ),
        `${JSON.stringify(field)}: ${JSON.stringify(problem.errors)}`,
      );
    }
  });

  it('duplicate keys: the JSON is taken as parsed, and the result follows the rules', async () => {
    const response = await postRaw(shared(), '{"author":"ada","content":" ","content":"ok"}');
    assert.ok([201, 400].includes(response.statusCode));
    if (response.statusCode === 201) assert.equal(response.json().content, 'ok');
  });

  it('content is stored and returned exactly as sent', async () => {
    const app = shared();
    const samples = [
      'caf\u00e9 vs cafe\u0301', // NFC and NFD side by side: no normalization
      '  leading and trailing  ',
      'line1\r\nline2\nline3\rline4\ttab',
      '👩‍👩‍👧‍👦 🏳️‍🌈 🇫🇷 ✋🏽', // ZWJ sequences, flags, modifiers
      '\u202eRTL override\u202c and \u200f marks \u200e',
      'zero\u200bwidth\u2060joiner\ufeffbom',
      '<script>alert(1)</script> & "quotes" \\ backslash \'single\'',
      '\u2028\u2029 separators',
      '\ud800\udc00 \udbff\udfff', // the first and last supplementary code points
      '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ﷽ ࿐',
    ];
    for (const content of samples) {
      const created = await post(app, { content });
      assert.equal(created.statusCode, 201, `${JSON.stringify(content)}: ${created.body}`);
      const { id } = created.json();
      assert.equal(created.json().content, content);
      const got = await app.inject({ url: `/api/messages/${id}` });
      assert.equal(got.json().content, content);
      assert.ok(got.rawPayload.includes(Buffer.from(JSON.stringify(content).slice(1, -1))));
      const listed = await app.inject({ url: `/api/messages?id=${id}` });
      assert.equal(listed.json()[0].content, content);
      const edited = await app.inject({
        method: 'PUT',
        url: `/api/messages/${id}`,
        payload: { content: `${content}!` },
      });
      assert.equal(edited.json().content, `${content}!`);
    }
  });
});
