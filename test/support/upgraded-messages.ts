/** What a store upgraded from an older schema must answer for the messages it held. */
import assert from 'node:assert/strict';
import type { Message } from '../../src/domain/message.ts';
import { messageJson } from '../../src/domain/message-json.ts';
import type { Store } from '../../src/domain/store.ts';

/**
 * Every message kept, listed as messageJson's bytes (the JSON the upgrade
 * stored with each row) in both orders and by room, and read back whole.
 */
export async function assertUpgradedMessages(store: Store, messages: readonly Message[]) {
  assert.equal(
    (await store.messages.list({ order: 'asc', limit: 100 })).json,
    messages.map(messageJson).join(','),
  );
  assert.equal(
    (await store.messages.list({ order: 'desc', limit: 100, room: 'odd' })).json,
    messages
      .filter((m) => m.room === 'odd')
      .reverse()
      .map(messageJson)
      .join(','),
  );
  const sample = messages[7]!;
  assert.deepEqual(await store.messages.get(sample.id), sample);
  assert.deepEqual(await store.messages.getText(sample.id), {
    json: messageJson(sample),
    version: sample.version,
    room: sample.room,
  });
}
