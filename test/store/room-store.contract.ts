/**
 * Every promise of the room seams (src/domain/room-store.ts) and of a
 * message's implicit room, as one suite that each engine's test file runs, so
 * the engines cannot drift apart. The rules (who may) are the service's and
 * are tested through HTTP; here the `decide` callbacks answer plainly.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { Change } from '../../src/domain/change.ts';
import type { Message, NewMessage } from '../../src/domain/message.ts';
import { MAX_UNREAD, type UserRoom } from '../../src/domain/room.ts';
import { MemberRoomsMemo } from '../../src/domain/member-rooms-memo.ts';
import { feedWithActivity, WINDOW_SIZE } from '../../src/domain/room-activity.ts';
import type { RoomValues } from '../../src/domain/room-store.ts';
import { userRooms } from '../../src/domain/user-rooms.ts';
import type { Store } from '../../src/domain/store.ts';
import { skipUnlessEngine, type Engine } from '../support/engines.ts';
import { withStore } from '../support/open-store.ts';

let clock = Date.parse('2026-11-22T10:00:00.000Z');
function nextTime(): string {
  clock += 1;
  return new Date(clock).toISOString();
}

function newMessage(overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    id: uuidv7(),
    room: 'general',
    author: 'ada',
    content: 'hello',
    createdAt: nextTime(),
    ...overrides,
  };
}

const publicRoom: RoomValues = { visibility: 'public', topic: '' };
const asIs = (values: RoomValues) => () => values;

/** The changes after `seq`, as [kind, room, subject, parsed data, madePrivate]. */
async function changesAfter(store: Store, seq: number) {
  const changes: Change[] = await store.changes.since(seq, 1000);
  return changes.map((c) => [c.kind, c.room, c.subject, JSON.parse(c.data), c.madePrivate]);
}

async function latest(store: Store): Promise<number> {
  return (await store.changes.bounds()).latest;
}

/**
 * A subject's room list as the service answers it: the store's memberships and
 * markers, and the rooms' windows kept by a change feed over the store's log.
 */
async function withRoomLists(
  store: Store,
  fn: (roomsOf: (subject: string, limit: number) => Promise<UserRoom[]>) => Promise<void>,
) {
  const memberships = new MemberRoomsMemo(() => feed.head);
  const { feed, activity } = feedWithActivity(
    store.changes,
    (rooms, perRoom) => store.messages.recent(rooms, perRoom),
    (error) => {
      throw error;
    },
    [memberships],
  );
  await feed.start();
  const deps = {
    members: store.members,
    readMarkers: store.readMarkers,
    activity,
    memberships,
    latestSeq: async () => (await store.changes.bounds()).latest,
    changesReached: (seq: number) => feed.reached(seq),
  };
  try {
    await fn((subject, limit) => userRooms(deps, subject, limit));
  } finally {
    await feed.stop();
  }
}

async function createRoom(store: Store, name: string, values = publicRoom, creator?: string) {
  return (await store.rooms.put(name, null, creator ?? null, nextTime(), asIs(values))).room;
}

export function roomStoreContract(engine: Engine): void {
  describe(`Room store contract [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);
    const test = (name: string, fn: (store: Store) => Promise<void>) =>
      it(name, { skip }, () => withStore(engine, {}, fn));

    describe('rooms', () => {
      test('a fresh store holds the public room general, with no owner', async (store) => {
        const general = await store.rooms.get('general');
        assert.equal(general?.visibility, 'public');
        assert.equal(general?.createdBy, null);
        assert.deepEqual(await store.rooms.facts('general', 'ada'), {
          room: general,
          role: null,
          owners: 0,
        });
      });

      test('put creates: version 1, room.created; with a creator also its owner and member.added', async (store) => {
        const seq = await latest(store);
        const now = nextTime();
        const outcome = await store.rooms.put('Team', 'ada', 'ada', now, (current) => {
          assert.equal(current, undefined);
          return { visibility: 'private', topic: 'plans 🗺' };
        });
        const room = {
          name: 'Team',
          visibility: 'private',
          topic: 'plans 🗺',
          createdBy: 'ada',
          createdAt: now,
          updatedAt: now,
          version: 1,
        };
        assert.deepEqual(outcome, { room, created: true, changed: true });
        assert.deepEqual(await store.rooms.get('Team'), room);
        const member = { room: 'Team', subject: 'ada', role: 'owner', joinedAt: now };
        assert.deepEqual(await store.members.get('Team', 'ada'), member);
        assert.deepEqual(await store.rooms.facts('Team', 'ada'), {
          room,
          role: 'owner',
          owners: 1,
        });
        assert.deepEqual(await changesAfter(store, seq), [
          ['room.created', 'Team', null, room, false],
          ['member.added', 'Team', 'ada', member, false],
        ]);
        // An owner's membership made with the room leaves its marker unset.
        const marker = await store.readMarkers.get('Team', 'ada');
        assert.deepEqual([marker.lastRead, marker.version], [null, 0]);
      });

      test('without a creator nobody becomes a member', async (store) => {
        const seq = await latest(store);
        const room = await createRoom(store, 'lobby');
        assert.equal(room.createdBy, null);
        assert.deepEqual((await store.members.list('lobby', { limit: 10 })).items, []);
        assert.deepEqual(
          (await changesAfter(store, seq)).map((c) => c[0]),
          ['room.created'],
        );
      });

      test('put updates what differs: version + 1, updatedAt, room.updated; madePrivate only public → private', async (store) => {
        const created = await createRoom(store, 'r');
        const seq = await latest(store);
        const t1 = nextTime();
        const outcome = await store.rooms.put('r', null, null, t1, (current) => {
          assert.deepEqual(current, { room: created, role: null, owners: 0 });
          return { visibility: 'private', topic: 't' };
        });
        const updated = {
          ...created,
          visibility: 'private',
          topic: 't',
          updatedAt: t1,
          version: 2,
        };
        assert.deepEqual(outcome, { room: updated, created: false, changed: true });
        const t2 = nextTime();
        await store.rooms.put('r', null, null, t2, asIs({ visibility: 'private', topic: 'u' }));
        const t3 = nextTime();
        await store.rooms.put('r', null, null, t3, asIs({ visibility: 'public', topic: 'u' }));
        const changes = await changesAfter(store, seq);
        assert.deepEqual(
          changes.map((c) => [c[0], c[4], (c[3] as { version: number }).version]),
          [
            ['room.updated', true, 2],
            ['room.updated', false, 3],
            ['room.updated', false, 4],
          ],
        );
        assert.deepEqual(changes[0]![3], updated);
      });

      test('a put that changes nothing stores nothing and appends nothing', async (store) => {
        const created = await createRoom(store, 'r', { visibility: 'public', topic: 'x' });
        const seq = await latest(store);
        const outcome = await store.rooms.put(
          'r',
          null,
          null,
          nextTime(),
          asIs({ visibility: 'public', topic: 'x' }),
        );
        assert.deepEqual(outcome, { room: created, created: false, changed: false });
        assert.equal(await latest(store), seq);
      });

      test('a decide that throws stores nothing', async (store) => {
        const seq = await latest(store);
        await assert.rejects(
          store.rooms.put('nope', 'ada', 'ada', nextTime(), () => {
            throw new Error('refused');
          }),
          /refused/,
        );
        assert.equal(await store.rooms.get('nope'), undefined);
        assert.equal(await latest(store), seq);
      });

      test('list: code point order, after, limit with more, visibility, readableBy, latestSeq', async (store) => {
        for (const name of ['b', 'B', 'a', 'A-1', '_z']) await createRoom(store, name);
        await createRoom(store, 'secret', { visibility: 'private', topic: '' }, 'ada');
        await createRoom(store, 'hidden', { visibility: 'private', topic: '' });
        const names = async (query: Parameters<Store['rooms']['list']>[0]) =>
          (await store.rooms.list(query)).items.map((r) => r.name);
        assert.deepEqual(await names({ limit: 100 }), [
          'A-1',
          'B',
          '_z',
          'a',
          'b',
          'general',
          'hidden',
          'secret',
        ]);
        const page = await store.rooms.list({ limit: 2, after: 'B' });
        assert.deepEqual(
          page.items.map((r) => r.name),
          ['_z', 'a'],
        );
        assert.equal(page.more, true);
        assert.equal(page.latestSeq, await latest(store));
        assert.equal((await store.rooms.list({ limit: 8 })).more, false);
        assert.deepEqual(await names({ limit: 100, visibility: 'private' }), ['hidden', 'secret']);
        assert.deepEqual(await names({ limit: 100, readableBy: 'bob' }), [
          'A-1',
          'B',
          '_z',
          'a',
          'b',
          'general',
        ]);
        assert.deepEqual(await names({ limit: 100, readableBy: 'ada', visibility: 'private' }), [
          'secret',
        ]);
      });

      test('accessSnapshot: the private rooms, every membership, and the latest sequence', async (store) => {
        await createRoom(store, 'open', publicRoom, 'ada');
        await createRoom(store, 'closed', { visibility: 'private', topic: '' }, 'bob');
        await store.members.put('closed', 'cy', null, nextTime(), () => 'member');
        const snapshot = await store.rooms.accessSnapshot();
        assert.equal(snapshot.latestSeq, await latest(store));
        assert.deepEqual(snapshot.privateRooms, ['closed']);
        assert.deepEqual(snapshot.memberships.map((m) => m.join('/')).sort(), [
          'closed/bob',
          'closed/cy',
          'open/ada',
        ]);
      });
    });

    describe('implicit rooms', () => {
      test('the first message to a new name creates a public room of its author: room.created, member.added, message.created', async (store) => {
        const seq = await latest(store);
        const message = await store.messages.create(newMessage({ room: 'fresh', author: 'ada' }));
        const room = {
          name: 'fresh',
          visibility: 'public',
          topic: '',
          createdBy: 'ada',
          createdAt: message.createdAt,
          updatedAt: message.createdAt,
          version: 1,
        };
        assert.deepEqual(await store.rooms.get('fresh'), room);
        const member = {
          room: 'fresh',
          subject: 'ada',
          role: 'owner',
          joinedAt: message.createdAt,
        };
        assert.deepEqual(await changesAfter(store, seq), [
          ['room.created', 'fresh', null, room, false],
          ['member.added', 'fresh', 'ada', member, false],
          ['message.created', 'fresh', null, message, false],
        ]);
        // The next message to it creates nothing and joins nobody.
        const seq2 = await latest(store);
        await store.messages.create(newMessage({ room: 'fresh', author: 'bob' }));
        assert.deepEqual(
          (await changesAfter(store, seq2)).map((c) => c[0]),
          ['message.created'],
        );
        assert.equal(await store.members.get('fresh', 'bob'), undefined);
      });

      test('creates in parallel to one new name make one room', async (store) => {
        const seq = await latest(store);
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.messages.create(newMessage({ room: 'race', author: `a${i}` })),
          ),
        );
        const kinds = (await changesAfter(store, seq)).map((c) => c[0]);
        assert.equal(kinds.filter((k) => k === 'room.created').length, 1);
        assert.equal(kinds.filter((k) => k === 'member.added').length, 1);
        assert.equal(kinds.filter((k) => k === 'message.created').length, 10);
        assert.equal(kinds[0], 'room.created');
        assert.equal((await store.members.list('race', { limit: 10 })).items.length, 1);
      });

      test('a create that fails creates no room', async (store) => {
        const lost = { scope: '', key: 'never-claimed', requestHash: 'h', token: randomUUID() };
        await assert.rejects(store.messages.create(newMessage({ room: 'ghost' }), lost));
        assert.equal(await store.rooms.get('ghost'), undefined);
        assert.equal(await store.members.get('ghost', 'ada'), undefined);
      });
    });

    describe('memberships', () => {
      test('put adds (member.added) with the marker at the newest message; a role change is member.updated; the same role nothing', async (store) => {
        await createRoom(store, 'r');
        await store.messages.create(newMessage({ room: 'r' }));
        const newest = await store.messages.create(newMessage({ room: 'r' }));
        await store.messages.create(newMessage({ room: 'other' }));
        const seq = await latest(store);
        const now = nextTime();
        const added = await store.members.put('r', 'bob', 'ada', now, (facts) => {
          assert.equal(facts.current, undefined);
          assert.equal(facts.room?.room.name, 'r');
          assert.equal(facts.room?.role, null);
          return 'member';
        });
        const membership = { room: 'r', subject: 'bob', role: 'member', joinedAt: now };
        assert.deepEqual(added, { membership, created: true, changed: true });
        assert.deepEqual(await store.readMarkers.get('r', 'bob'), {
          room: 'r',
          subject: 'bob',
          lastRead: newest.id,
          unread: 0,
          version: 1,
        });
        const promoted = await store.members.put('r', 'bob', null, nextTime(), (facts) => {
          assert.deepEqual(facts.current, membership);
          return 'owner';
        });
        assert.deepEqual(promoted, {
          membership: { ...membership, role: 'owner' },
          created: false,
          changed: true,
        });
        assert.deepEqual(await store.rooms.facts('r', 'bob'), {
          room: await store.rooms.get('r'),
          role: 'owner',
          owners: 1,
        });
        const same = await store.members.put('r', 'bob', null, nextTime(), () => 'owner');
        assert.equal(same.changed, false);
        assert.deepEqual(await changesAfter(store, seq), [
          ['member.added', 'r', 'bob', membership, false],
          ['member.updated', 'r', 'bob', { ...membership, role: 'owner' }, false],
        ]);
      });

      test('remove: member.removed with removedBy, the membership as it was; the marker stays; rejoining moves it on', async (store) => {
        await createRoom(store, 'r');
        const first = await store.messages.create(newMessage({ room: 'r' }));
        const { membership } = await store.members.put(
          'r',
          'bob',
          null,
          nextTime(),
          () => 'member',
        );
        const seq = await latest(store);
        const removed = await store.members.remove('r', 'bob', 'ada', 'ada', (facts) => {
          assert.deepEqual(facts.current, membership);
        });
        assert.deepEqual(removed, membership);
        assert.equal(await store.members.get('r', 'bob'), undefined);
        assert.deepEqual(await changesAfter(store, seq), [
          ['member.removed', 'r', 'bob', { ...membership, removedBy: 'ada' }, false],
        ]);
        const marker = await store.readMarkers.get('r', 'bob');
        assert.deepEqual([marker.lastRead, marker.version], [first.id, 1]);
        const second = await store.messages.create(newMessage({ room: 'r' }));
        await store.members.put('r', 'bob', null, nextTime(), () => 'member');
        const again = await store.readMarkers.get('r', 'bob');
        assert.deepEqual([again.lastRead, again.version], [second.id, 2]);
      });

      test('a remove whose decide throws removes nothing', async (store) => {
        await createRoom(store, 'r');
        await store.members.put('r', 'bob', null, nextTime(), () => 'owner');
        const seq = await latest(store);
        await assert.rejects(
          store.members.remove('r', 'bob', null, null, () => {
            throw new Error('last owner');
          }),
          /last owner/,
        );
        assert.equal((await store.members.get('r', 'bob'))?.role, 'owner');
        assert.equal(await latest(store), seq);
      });

      test('list: by subject in code point order, after, limit with more', async (store) => {
        await createRoom(store, 'r');
        for (const s of ['zed', 'Émile', 'Bob', 'ada']) {
          await store.members.put('r', s, null, nextTime(), () => 'member');
        }
        const all = await store.members.list('r', { limit: 10 });
        assert.deepEqual(
          all.items.map((m) => m.subject),
          ['Bob', 'ada', 'zed', 'Émile'],
        );
        assert.equal(all.more, false);
        assert.equal(all.latestSeq, await latest(store));
        const page = await store.members.list('r', { limit: 2, after: 'Bob' });
        assert.deepEqual(
          page.items.map((m) => m.subject),
          ['ada', 'zed'],
        );
        assert.equal(page.more, true);
      });
    });

    describe('read markers', () => {
      test('never set: lastRead null, version 0, unread counts every message by others', async (store) => {
        await store.messages.create(newMessage({ author: 'bob' }));
        await store.messages.create(newMessage({ author: 'ada' }));
        await store.messages.create(newMessage({ author: 'cy' }));
        assert.deepEqual(await store.readMarkers.get('general', 'ada'), {
          room: 'general',
          subject: 'ada',
          lastRead: null,
          unread: 2,
          version: 0,
        });
      });

      test('put: version + 1 and read-marker.updated (no unread); unread after it; the same id changes nothing', async (store) => {
        const m1 = await store.messages.create(newMessage({ author: 'bob' }));
        await store.messages.create(newMessage({ author: 'ada' }));
        await store.messages.create(newMessage({ author: 'bob' }));
        await store.messages.create(newMessage({ author: 'bob', room: 'elsewhere' }));
        const seq = await latest(store);
        const outcome = await store.readMarkers.put('general', 'ada', m1.id, (facts) => {
          assert.deepEqual(facts, {
            current: { room: 'general', subject: 'ada', lastRead: null, unread: 2, version: 0 },
            messageInRoom: true,
          });
          return true;
        });
        const marker = { room: 'general', subject: 'ada', lastRead: m1.id, version: 1 };
        assert.deepEqual(outcome, { marker: { ...marker, unread: 1 }, changed: true });
        assert.deepEqual(await changesAfter(store, seq), [
          ['read-marker.updated', 'general', 'ada', marker, false],
        ]);
        const again = await store.readMarkers.put('general', 'ada', m1.id, () => true);
        assert.equal(again.changed, false);
        assert.equal(again.marker.version, 1);
        const refused = await store.readMarkers.put('general', 'ada', uuidv7(), () => false);
        assert.equal(refused.changed, false);
        assert.equal(await latest(store), seq + 1);
      });

      test('messageInRoom is false for a message of another room and for none, true for its own', async (store) => {
        const other = await store.messages.create(newMessage({ room: 'elsewhere' }));
        const here = await store.messages.create(newMessage({ room: 'general' }));
        const seen: boolean[] = [];
        for (const id of [other.id, uuidv7(), here.id]) {
          await store.readMarkers.put('general', 'ada', id, (facts) => {
            seen.push(facts.messageInRoom);
            return false;
          });
        }
        // Asked once per put (a decide never called would leave this empty), and true for its own room.
        assert.deepEqual(seen, [false, false, true]);
      });

      test('unread stops at 100 and still works after its message is deleted', async (store) => {
        const first = await store.messages.create(newMessage({ author: 'bob' }));
        await store.readMarkers.put('general', 'ada', first.id, () => true);
        for (let i = 0; i < 105; i++) await store.messages.create(newMessage({ author: 'bob' }));
        assert.equal((await store.readMarkers.get('general', 'ada')).unread, 100);
        await store.messages.delete(first.id, () => undefined);
        const marker = await store.readMarkers.get('general', 'ada');
        assert.deepEqual([marker.lastRead, marker.unread], [first.id, 100]);
      });
    });

    describe("a subject's rooms", () => {
      test('latest activity first (newest message or creation), ties by name; lastMessage, marker and unread', (store) =>
        withRoomLists(store, async (roomsOf) => {
          await createRoom(store, 'quiet', publicRoom, 'ada');
          const busy = await store.messages.create(newMessage({ room: 'busy', author: 'ada' }));
          const fromBob = await store.messages.create(newMessage({ room: 'busy', author: 'bob' }));
          await createRoom(store, 'newer', publicRoom, 'ada');
          await createRoom(store, 'notmine', publicRoom, 'bob');
          const rooms = await roomsOf('ada', 100);
          assert.deepEqual(
            rooms.map((r) => [r.name, r.role, r.lastMessage, r.lastRead, r.unread]),
            [
              ['newer', 'owner', null, null, 0],
              [
                'busy',
                'owner',
                { id: fromBob.id, author: 'bob', createdAt: fromBob.createdAt },
                null,
                1,
              ],
              ['quiet', 'owner', null, null, 0],
            ],
          );
          assert.deepEqual((await roomsOf('ada', 100))[0], {
            ...(await store.rooms.get('newer'))!,
            role: 'owner',
            lastMessage: null,
            lastRead: null,
            unread: 0,
          });
          await store.readMarkers.put('busy', 'ada', busy.id, () => true);
          const again = await roomsOf('ada', 2);
          assert.deepEqual(
            again.map((r) => [r.name, r.lastRead, r.unread]),
            [
              ['newer', null, 0],
              ['busy', busy.id, 1],
            ],
          );
          const message: Message = await store.messages.create(
            newMessage({ room: 'quiet', author: 'cy' }),
          );
          assert.equal((await roomsOf('ada', 1))[0]!.name, 'quiet');
          assert.equal((await roomsOf('ada', 1))[0]!.lastMessage?.id, message.id);
          assert.deepEqual(await roomsOf('nobody', 10), []);
        }));

      test('a list cut by its limit is the head of the whole list, windows or none', (store) =>
        withRoomLists(store, async (roomsOf) => {
          for (const name of ['e', 'd', 'c', 'b', 'a'])
            await createRoom(store, name, publicRoom, 'ada');
          for (const name of ['c', 'a', 'e']) {
            await store.messages.create(newMessage({ room: name, author: 'bob' }));
          }
          // First with no window kept: ranked by each room's newest message alone.
          const head = await roomsOf('ada', 2);
          const whole = await roomsOf('ada', 100);
          assert.deepEqual(
            whole.map((r) => r.name),
            ['e', 'a', 'c', 'b', 'd'],
          );
          assert.deepEqual(head, whole.slice(0, 2));
          assert.deepEqual(await roomsOf('ada', 3), whole.slice(0, 3));
        }));

      test('rooms of the same activity are ordered by name', (store) =>
        withRoomLists(store, async (roomsOf) => {
          const at = nextTime();
          for (const name of ['b', 'A', 'a']) {
            await store.rooms.put(name, 'ada', 'ada', at, asIs(publicRoom));
          }
          assert.deepEqual(
            (await roomsOf('ada', 10)).map((r) => r.name),
            ['A', 'a', 'b'],
          );
        }));

      test('the memberships and markers come with the latest seq of their snapshot', async (store) => {
        await createRoom(store, 'mine', publicRoom, 'ada');
        await store.messages.create(newMessage({ room: 'mine', author: 'bob' }));
        const found = await store.members.memberRooms('ada');
        assert.equal(found.seq, await latest(store));
        assert.deepEqual(found.rooms, [
          { room: (await store.rooms.get('mine'))!, role: 'owner', lastRead: null },
        ]);
        assert.deepEqual(await store.members.memberRooms('nobody'), { rooms: [], seq: found.seq });
      });

      test('a room changed since the last list is listed as it is now (the memo keys on the version)', async (store) => {
        await createRoom(store, 'kept', publicRoom, 'ada');
        await createRoom(store, 'other', publicRoom, 'ada');
        const first = await store.members.memberRooms('ada');
        assert.equal(first.rooms.length, 2);
        for (const { room } of first.rooms)
          assert.deepEqual(room, await store.rooms.get(room.name));
        await store.rooms.put(
          'kept',
          'ada',
          'ada',
          nextTime(),
          asIs({ visibility: 'private', topic: 'moved on' }),
        );
        const second = await store.members.memberRooms('ada');
        const kept = second.rooms.find((r) => r.room.name === 'kept')!.room;
        assert.deepEqual(kept, await store.rooms.get('kept'));
        assert.equal(kept.topic, 'moved on');
        assert.equal(kept.visibility, 'private');
        assert.equal(kept.version, 2);
        // The room that did not change is the same as before.
        assert.deepEqual(
          second.rooms.find((r) => r.room.name === 'other')!.room,
          await store.rooms.get('other'),
        );
      });

      test("recent: each room's newest messages, newest first, with the latest seq", async (store) => {
        const made: Message[] = [];
        for (let i = 0; i < 7; i++) {
          made.push(
            await store.messages.create(
              newMessage({ room: i % 2 ? 'odd' : 'even', author: `a${i}` }),
            ),
          );
        }
        const recent = await store.messages.recent(['even', 'odd', 'none'], 3);
        assert.equal(recent.seq, await latest(store));
        const short = (m: Message) => ({ id: m.id, author: m.author, createdAt: m.createdAt });
        assert.deepEqual(recent.rooms.get('even'), [made[6]!, made[4]!, made[2]!].map(short));
        assert.deepEqual(recent.rooms.get('odd'), [made[5]!, made[3]!, made[1]!].map(short));
        assert.equal(recent.rooms.has('none'), false);
      });

      test('a room list agrees with the store through creates, deletes and markers, past the windows', (store) =>
        withRoomLists(store, async (roomsOf) => {
          // Deterministic pseudo-random steps: rooms of every size, the subject's own messages
          // among others', markers moved back and forth, deletes of the newest and the marked.
          // xorshift32: every bit of it is random enough (an LCG's low bits repeat every few steps).
          let seed = 2463534242;
          const random = (n: number) => {
            seed ^= seed << 13;
            seed ^= seed >>> 17;
            seed ^= seed << 5;
            seed >>>= 0;
            return seed % n;
          };
          const rooms = ['r0', 'r1', 'r2', 'r3'];
          for (const room of rooms) await createRoom(store, room, publicRoom, 'ada');
          const live = new Map<string, Message[]>(rooms.map((r) => [r, []]));
          const check = async (step: number) => {
            const list = await roomsOf('ada', 100);
            for (const entry of list) {
              const messages = live.get(entry.name)!;
              const newest = messages.at(-1);
              assert.deepEqual(
                entry.lastMessage,
                newest === undefined
                  ? null
                  : { id: newest.id, author: newest.author, createdAt: newest.createdAt },
                `step ${step}: newest of ${entry.name}`,
              );
              const marker = await store.readMarkers.get(entry.name, 'ada');
              assert.equal(entry.lastRead, marker.lastRead, `step ${step}`);
              const expected = Math.min(
                MAX_UNREAD,
                messages.filter((m) => m.id > (marker.lastRead ?? '') && m.author !== 'ada').length,
              );
              assert.equal(entry.unread, expected, `step ${step}: unread of ${entry.name}`);
            }
          };
          for (let step = 0; step < 1500; step++) {
            // r0 grows past a window's trim, r3 stays small.
            const room = rooms[random(10) < 6 ? 0 : 1 + random(3)]!;
            const messages = live.get(room)!;
            const op = random(20);
            if (op < 14 || messages.length === 0) {
              // A stretch of the subject's own messages: a window then holds fewer than 100 of
              // others', and a marker older than it needs the store's count.
              const own = step >= 1100 && step < 1250;
              const author = own || random(4) === 0 ? 'ada' : random(2) ? 'bob' : 'cy';
              messages.push(await store.messages.create(newMessage({ room, author })));
            } else if (op < 17) {
              const at = random(3) === 0 ? messages.length - 1 : random(messages.length);
              await store.messages.delete(messages[at]!.id, () => undefined);
              messages.splice(at, 1);
            } else {
              const at = random(messages.length);
              await store.readMarkers.put(room, 'ada', messages[at]!.id, () => true);
            }
            if (step % 23 === 0 || step > 1480) await check(step);
          }
          assert.ok(live.get('r0')!.length > 2 * WINDOW_SIZE, 'r0 outgrew a window');
          await check(1500);
        }));
    });

    describe('messages a subject may read', () => {
      test('readableBy leaves out the private rooms it is not a member of', async (store) => {
        await createRoom(store, 'closed', { visibility: 'private', topic: '' }, 'bob');
        const open = await store.messages.create(newMessage({ room: 'general' }));
        const hidden = await store.messages.create(newMessage({ room: 'closed' }));
        const ids = async (readableBy: string, order: 'asc' | 'desc') =>
          (
            JSON.parse(
              `[${(await store.messages.list({ order, limit: 10, readableBy })).json}]`,
            ) as Message[]
          ).map((m) => m.id);
        assert.deepEqual(await ids('ada', 'asc'), [open.id]);
        assert.deepEqual(await ids('bob', 'asc'), [open.id, hidden.id]);
        assert.deepEqual(await ids('bob', 'desc'), [hidden.id, open.id]);
        await store.members.remove('closed', 'bob', null, null, () => undefined);
        assert.deepEqual(await ids('bob', 'asc'), [open.id]);
      });
    });
  });
}
