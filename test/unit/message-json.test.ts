/** A page's joined JSON texts are cut and read without parsing: exact for any content the rules allow. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import {
  firstIdOfMessagesJson,
  lastIdOfMessagesJson,
  messageJson,
  withoutFirstMessage,
  withoutLastMessage,
} from '../../src/domain/message-json.ts';

const message = (id: string, content: string): Message => ({
  id,
  room: 'general',
  author: '{"id":"x',
  content,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
  version: 1,
  replyTo: null,
});

test('the last id and the page without its last message, whatever the content says', () => {
  const tricky = [
    message('01a20000-0000-7000-8000-000000000001', '{"id":"fake-id-in-content"}'),
    message('01a20000-0000-7000-8000-000000000002', ',{"id":"another"} \\ "'),
    message('01a20000-0000-7000-8000-000000000003', 'plain'),
  ];
  const texts = tricky.map(messageJson);
  const joined = texts.join(',');
  assert.equal(lastIdOfMessagesJson(joined), '01a20000-0000-7000-8000-000000000003');
  assert.equal(withoutLastMessage(joined), texts.slice(0, 2).join(','));
  assert.equal(withoutLastMessage(texts.slice(0, 2).join(',')), texts[0]);
  assert.equal(withoutLastMessage(texts[0]!), '');
  assert.equal(lastIdOfMessagesJson(''), undefined);
  assert.deepEqual(JSON.parse(`[${withoutLastMessage(joined)}]`), tricky.slice(0, 2));
});

test('the first id and the texts without the first message, whatever the content says', () => {
  const tricky = [
    message('01a20000-0000-7000-8000-000000000001', '{"id":"fake-id-in-content"}'),
    message('01a20000-0000-7000-8000-000000000002', ',{"id":"another"} \\ "'),
  ];
  const texts = tricky.map(messageJson);
  assert.equal(firstIdOfMessagesJson(texts.join(',')), '01a20000-0000-7000-8000-000000000001');
  assert.equal(firstIdOfMessagesJson(texts[1]!), '01a20000-0000-7000-8000-000000000002');
  assert.equal(firstIdOfMessagesJson(''), undefined);
  assert.equal(withoutFirstMessage(texts.join(',')), texts[1]);
  assert.equal(withoutFirstMessage(texts[1]!), '');
  assert.equal(withoutFirstMessage(''), '');
  assert.deepEqual(JSON.parse(`[${withoutFirstMessage(texts.join(','))}]`), tricky.slice(1));
});
