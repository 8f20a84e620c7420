/** The response checker itself: it must fail on every kind of drift, or the contract tests prove nothing. */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { sqliteEngine } from '../support/engines.ts';
import type { OpenApiConformance, ReceivedResponse } from '../support/openapi-conformance.ts';
import { withApp } from './http-contract.ts';

const message = {
  id: '019a2b3c-4d5e-7f00-8a1b-2c3d4e5f6a7b',
  room: 'general',
  author: 'ada',
  content: 'hi',
  createdAt: '2026-11-21T10:00:00.123Z',
  updatedAt: '2026-11-21T10:00:00.123Z',
  version: 1,
  replyTo: null,
};
const problem = {
  type: '/problems/not-found',
  title: 'Not found',
  status: 404,
  detail: 'No message with this id.',
  instance: 'urn:request:x',
};
const json = { 'content-type': 'application/json; charset=utf-8' };
const problemJson = { 'content-type': 'application/problem+json' };

function response(overrides: Partial<ReceivedResponse>): ReceivedResponse {
  return {
    method: 'GET',
    url: `/api/messages/${message.id}`,
    status: 200,
    headers: json,
    body: JSON.stringify(message),
    ...overrides,
  };
}

describe('OpenApiConformance', () => {
  let conformance: OpenApiConformance;
  before(async () => {
    conformance = await withApp(sqliteEngine, async (app) => app.conformance);
  });

  it('accepts responses that match the document', () => {
    conformance.check(response({}));
    conformance.check(response({ url: '/api/messages?limit=1', body: JSON.stringify([message]) }));
    conformance.check(
      response({ status: 404, headers: problemJson, body: JSON.stringify(problem) }),
    );
    conformance.check(response({ status: 304, headers: { etag: '"1"' }, body: '' }));
    conformance.check(
      response({ url: '/nope', status: 404, headers: problemJson, body: JSON.stringify(problem) }),
    );
    assert.ok(true);
  });

  const drifts: [string, Partial<ReceivedResponse>][] = [
    ['an undocumented status', { status: 418 }],
    ['an undocumented content type', { headers: { 'content-type': 'text/html' } }],
    ['a body that breaks the schema', { body: JSON.stringify({ ...message, version: 0 }) }],
    ['a missing field', { body: JSON.stringify({ ...message, room: undefined }) }],
    ['an extra field', { body: JSON.stringify({ ...message, secret: 1 }) }],
    ['a body that is not JSON', { body: '{' }],
    [
      'a problem without instance',
      {
        status: 404,
        headers: problemJson,
        body: JSON.stringify({ ...problem, instance: undefined }),
      },
    ],
    [
      'a problem type not in the catalog',
      {
        status: 404,
        headers: problemJson,
        body: JSON.stringify({ ...problem, type: 'about:blank' }),
      },
    ],
    ['a 304 with a body', { status: 304, body: 'x' }],
    ['an undocumented method', { method: 'PATCH', status: 200 }],
    ['an undocumented path answering 200', { url: '/secret', status: 200 }],
    [
      'a header that breaks its schema',
      { url: '/api/messages', body: '[]', headers: { ...json, 'event-seq': 'abc' } },
    ],
  ];
  for (const [what, overrides] of drifts) {
    it(`rejects ${what}`, () => {
      assert.throws(() => conformance.check(response(overrides)), assert.AssertionError);
    });
  }
});
