/** What a store upgraded from an older schema must answer for the messages it held. */
import assert from 'node:assert/strict';
import type { Message } from '../../src/domain/message.ts';
import { messageJson } from '../../src/domain/message-json.ts';
import { searchQuery, searchText } from '../../src/domain/search-text.ts';
import type { Store } from '../../src/domain/store.ts';

/**
 * Call last: it edits one of the messages.
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
  await assertUpgradedSearch(store, messages);
  await assertUpgradedRooms(store, messages);
  await assertUpgradedRevisions(store, messages);
}

/**
 * Each message kept answers its current version as its only revision (made
 * by its author at version 1; by no one recorded if it had been edited); the
 * first edit after the upgrade keeps that version and adds its own.
 */
async function assertUpgradedRevisions(store: Store, messages: readonly Message[]) {
  for (const m of messages) {
    assert.deepEqual(await store.messages.revisions(m.id, 0, 10), {
      room: m.room,
      revisions: [
        {
          version: m.version,
          content: m.content,
          updatedAt: m.updatedAt,
          editedBy: m.version === 1 ? m.author : null,
        },
      ],
      more: false,
    });
  }
  const edited = messages.find((m) => m.version > 1);
  assert.ok(edited, 'an upgraded message edited before the upgrade');
  const now = '2030-01-01T00:00:00.000Z';
  await store.messages.update(edited.id, { content: 'after', now, editedBy: 'eve' }, () => {});
  assert.deepEqual((await store.messages.revisions(edited.id, 0, 10))?.revisions, [
    {
      version: edited.version,
      content: edited.content,
      updatedAt: edited.updatedAt,
      editedBy: null,
    },
    { version: edited.version + 1, content: 'after', updatedAt: now, editedBy: 'eve' },
  ]);
}

/** The upgrade indexed every message it kept: a search finds them as the rule says. */
async function assertUpgradedSearch(store: Store, messages: readonly Message[]) {
  for (const q of ['MESSAGE', 'x'.repeat(20), `message 7 "QUOTED"`, `É 😀 TAB`]) {
    const query = searchQuery(q, false);
    const expected = messages.filter((m) =>
      query.terms.every((t) => searchText(m.content).includes(t)),
    );
    assert.ok(expected.length > 0, q);
    assert.equal(
      (await store.messages.list({ order: 'desc', limit: 100, q: query })).json,
      expected.reverse().map(messageJson).join(','),
      q,
    );
  }
}

/**
 * The rooms of the messages held, and `general`, are public rooms with no
 * owner and no members, each created when its oldest message was.
 */
async function assertUpgradedRooms(store: Store, messages: readonly Message[]) {
  const oldest = new Map<string, string>();
  for (const m of messages) {
    const seen = oldest.get(m.room);
    if (seen === undefined || m.createdAt < seen) oldest.set(m.room, m.createdAt);
  }
  const names = [...new Set([...oldest.keys(), 'general'])].sort();
  const page = await store.rooms.list({ limit: 100 });
  assert.deepEqual(
    page.items.map((r) => r.name),
    names,
  );
  for (const room of page.items) {
    assert.equal(room.visibility, 'public');
    assert.equal(room.topic, '');
    assert.equal(room.createdBy, null);
    assert.equal(room.version, 1);
    assert.equal(room.updatedAt, room.createdAt);
    if (oldest.has(room.name)) assert.equal(room.createdAt, oldest.get(room.name));
    else assert.match(room.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.deepEqual((await store.members.list(room.name, { limit: 10 })).items, []);
  }
  const access = await store.rooms.accessSnapshot();
  assert.deepEqual(access.privateRooms, []);
  assert.deepEqual(access.memberships, []);
}
