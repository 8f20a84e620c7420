/** Writes through the API and bounded waits, shared by the event stream tests. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from '../../src/domain/message.ts';
import type { TestApp } from '../support/test-app.ts';

export async function createMessage(
  t: TestApp,
  body: { content: string; room?: string; author?: string },
): Promise<Message> {
  const response = await t.app.http.inject({
    method: 'POST',
    url: '/api/messages',
    payload: { author: 'ada', ...body },
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json<Message>();
}

export async function updateMessage(t: TestApp, id: string, content: string): Promise<Message> {
  const response = await t.app.http.inject({
    method: 'PUT',
    url: `/api/messages/${id}`,
    payload: { content },
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<Message>();
}

export async function deleteMessage(t: TestApp, id: string): Promise<Message> {
  const response = await t.app.http.inject({ method: 'DELETE', url: `/api/messages/${id}` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<Message>();
}

/** The latest change sequence, as a list response reports it. */
export async function eventSeq(t: TestApp): Promise<number> {
  const response = await t.app.http.inject({ url: '/api/messages?limit=1' });
  return Number(response.headers['event-seq']);
}

/** Polls `condition` until it holds; fails after `timeoutMs` (a bound on a wait, not a timing assertion). */
export async function eventually(
  condition: () => boolean,
  what: string,
  timeoutMs = 10_000,
  refresh?: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await refresh?.();
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(refresh === undefined ? 10 : 50);
    await refresh?.();
  }
}

/** Asserts the numbers strictly increase. */
export function assertStrictlyIncreasing(values: readonly number[], what: string): void {
  for (let i = 1; i < values.length; i++) {
    assert.ok(values[i]! > values[i - 1]!, `${what}: ${values[i]} follows ${values[i - 1]}`);
  }
}
