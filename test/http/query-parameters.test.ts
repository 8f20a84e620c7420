/**
 * Query parameters are read as written: an integer is plain decimal digits,
 * a value is valid percent-encoded UTF-8, a parameter that takes one value is
 * given once. Anything else is a 400 naming the parameter, never a guess.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertProblem, eachEngine, onlyError, uniqueRoom } from './http-contract.ts';

eachEngine('query parameters', (_engine, shared) => {
  async function refused(url: string, parameter: string, detail: RegExp) {
    const problem = assertProblem(await shared().inject({ method: 'GET', url }), 400, 'validation');
    const error = onlyError(problem);
    assert.equal(error.parameter, parameter, url);
    assert.match(error.detail, detail, url);
  }

  it('an integer is plain decimal: no hex, exponent, fraction, sign, leading zero or space', async () => {
    const app = shared();
    const message = await app.create({ room: uniqueRoom() });
    const lists = [
      '/api/messages?limit=',
      '/api/rooms?limit=',
      `/api/messages/${message.id}/revisions?limit=`,
      `/api/messages/${message.id}/reactions/%F0%9F%91%8D?limit=`,
    ];
    for (const list of lists) {
      for (const limit of ['0x10', '1e1', '2.0', '+1', '01', '%202', '2%20', '0b1', 'Infinity']) {
        await refused(`${list}${limit}`, 'limit', /must be integer/);
      }
      const response = await app.inject({ method: 'GET', url: `${list}10` });
      assert.equal(response.statusCode, 200, `${list}10: ${response.body}`);
    }
    // The rule's own bounds still apply to plain integers.
    await refused('/api/messages?limit=0', 'limit', /limit/);
    await refused('/api/messages?limit=1001', 'limit', /limit/);
  });

  it('a value that is not valid percent-encoded UTF-8 is a 400 naming it, never searched as text', async () => {
    const app = shared();
    const room = uniqueRoom();
    await app.create({ room, content: 'pct 100%ff and %zz here' });
    for (const bad of ['%FF', '%zz', '%', 'a%', '%ED%A0%80', '%C0%AF', 'ok%E2%82']) {
      await refused(`/api/messages?room=${room}&q=${bad}`, 'q', /percent-encoded UTF-8/);
    }
    await refused('/api/messages?room=%FF', 'room', /percent-encoded UTF-8/);
    // Well-formed escapes still decode: `%25` is a percent sign, `+` a space.
    const found = await app.inject({
      method: 'GET',
      url: `/api/messages?room=${room}&q=100%25ff+and`,
    });
    assert.equal(found.statusCode, 200, found.body);
    assert.equal((found.json() as unknown[]).length, 1);
    // An unknown parameter is ignored, however it is written.
    const ignored = await app.inject({ method: 'GET', url: `/api/messages?room=${room}&x=%FF` });
    assert.equal(ignored.statusCode, 200, ignored.body);
  });

  it('each refused parameter is reported, once', async () => {
    const problem = assertProblem(
      await shared().inject({ method: 'GET', url: '/api/messages?limit=0x10&room=!!&q=%FF' }),
      400,
      'validation',
    );
    assert.deepEqual(
      problem.errors?.map((e) => e.parameter).sort(),
      ['limit', 'q', 'room'],
      JSON.stringify(problem.errors),
    );
  });

  it('a parameter that takes one value, given twice, is a 400 that says so', async () => {
    await refused('/api/messages?order=desc&order=desc', 'order', /given once/);
    await refused('/api/messages?limit=2&limit=2', 'limit', /given once/);
    await refused('/api/rooms?after=a&after=b', 'after', /given once/);
    // A repeatable one takes every value.
    const app = shared();
    const [a, b] = [await app.create(), await app.create()];
    const both = await app.inject({ method: 'GET', url: `/api/messages?id=${a.id}&id=${b.id}` });
    assert.equal(both.statusCode, 200, both.body);
    assert.equal((both.json() as unknown[]).length, 2);
  });
});
