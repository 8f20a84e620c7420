/**
 * Every promise of the store seams (src/domain/store.ts and the concerns it
 * names: message-store.ts, change-log.ts, idempotency-store.ts), as one
 * suite. Each engine's test file runs this same body, so the engines
 * cannot drift apart. Every test gets a private, freshly migrated database.
 */
import { messageChanges } from '../support/message-changes.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../../src/config.ts';
import { AppError, ErrorKinds, isAppError } from '../../src/errors.ts';
import type { ListOrder, ListQuery, Message, NewMessage } from '../../src/domain/message.ts';
import { searchQuery } from '../../src/domain/search-text.ts';
import { messageJson } from '../../src/domain/message-json.ts';
import type { ClaimTiming, IdempotencyClaim } from '../../src/domain/idempotency-store.ts';
import type { MessageStore } from '../../src/domain/message-store.ts';
import type { Store } from '../../src/domain/store.ts';
import { skipUnlessEngine, type Engine, type TestDatabase } from '../support/engines.ts';
import { openStoreWith, withStore } from '../support/open-store.ts';

let clock = Date.parse('2026-11-21T10:00:00.000Z');
/** Distinct, increasing millisecond timestamps, as the service would hand out. */
function nextTime(): string {
  clock += 1;
  return new Date(clock).toISOString();
}

/** A list, parsed: the store answers each message's JSON text. */
async function listed(
  store: Store,
  query: Parameters<MessageStore['list']>[0],
): Promise<Message[]> {
  return JSON.parse(`[${(await store.messages.list(query)).json}]`) as Message[];
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

function claimOf(key: string, requestHash = 'hash-a', scope = ''): IdempotencyClaim {
  return { scope, key, requestHash, token: randomUUID() };
}

const T0 = new Date('2026-11-21T10:00:00.000Z');
function timing(msAfterT0: number): ClaimTiming {
  return { now: new Date(T0.getTime() + msAfterT0), inFlightMs: 30_000, ttlMs: 86_400_000 };
}

const noCheck = () => undefined;

/** `settings`: the store's settings besides DATABASE_URL (e.g. BATCHING=off), named in the title. */
export function messageStoreContract(engine: Engine, settings: Partial<Config> = {}): void {
  const openStore = (url: string) => openStoreWith(url, settings);
  const named = Object.entries(settings).map(([key, value]) => `, ${key}=${String(value)}`);
  describe(`Store contract [${engine.name}${named.join('')}]`, async () => {
    const skip = await skipUnlessEngine(engine);
    const test = (name: string, fn: (store: Store, db: TestDatabase) => Promise<void>) =>
      it(name, { skip }, () => withStore(engine, settings, fn));

    describe('create and get', () => {
      test('create returns the stored message: version 1, updatedAt = createdAt', async (store) => {
        const input = newMessage({ room: 'r.1_x-Y', content: 'hé 👋\r\n\ttab' });
        const created = await store.messages.create(input);
        assert.deepEqual(created, {
          ...input,
          updatedAt: input.createdAt,
          version: 1,
          replyTo: null,
        });
        assert.deepEqual(await store.messages.get(input.id), created);
      });

      test('get of an id that was never stored is undefined', async (store) => {
        assert.equal(await store.messages.get(uuidv7()), undefined);
        assert.equal(await store.messages.getText(uuidv7()), undefined);
      });

      test("getText is messageJson's bytes and the version, after an edit too, gone after a delete", async (store) => {
        const input = newMessage({ content: 'quote " backslash \\ tab\t 👩‍👩‍👧 \u2028' });
        const created = await store.messages.create(input);
        assert.deepEqual(await store.messages.getText(input.id), {
          json: messageJson(created),
          version: 1,
          room: created.room,
        });
        const edited = (await store.messages.update(
          input.id,
          { content: 'new "text"', now: nextTime(), editedBy: null },
          () => {},
        ))!;
        assert.deepEqual(await store.messages.getText(input.id), {
          json: messageJson(edited.message),
          version: 2,
          room: created.room,
        });
        await store.messages.delete(input.id, () => {});
        assert.equal(await store.messages.getText(input.id), undefined);
      });

      test('times come back exactly as stored (UTC, milliseconds)', async (store) => {
        const input = newMessage({ createdAt: '2026-01-02T03:04:05.006Z' });
        await store.messages.create(input);
        const got = await store.messages.get(input.id);
        assert.equal(got?.createdAt, '2026-01-02T03:04:05.006Z');
        assert.equal(got?.updatedAt, '2026-01-02T03:04:05.006Z');
      });

      test('content is stored exactly: NUL-free Unicode of any kind, 4000 code points', async (store) => {
        const content = 'e\u0301 \u00e9 \u200b \u2028 🏳️‍🌈 '.repeat(10) + '😀'.repeat(3800);
        const input = newMessage({ content });
        await store.messages.create(input);
        assert.equal((await store.messages.get(input.id))?.content, content);
      });

      test('creates in parallel all succeed, each with its own change', async (store) => {
        const inputs = Array.from({ length: 40 }, () => newMessage());
        await Promise.all(inputs.map((m) => store.messages.create(m)));
        for (const m of inputs) assert.equal((await store.messages.get(m.id))?.id, m.id);
        const changes = messageChanges(await store.changes.since(0, 1000));
        assert.equal(changes.length, 40);
        assert.deepEqual(
          new Set(changes.map((c) => c.message.id)),
          new Set(inputs.map((m) => m.id)),
        );
      });
    });

    describe('update', () => {
      test('stores new content: version + 1, updatedAt = now, other fields kept', async (store) => {
        const created = await store.messages.create(newMessage());
        const now = nextTime();
        const result = await store.messages.update(
          created.id,
          { content: 'edited', now: now, editedBy: null },
          noCheck,
        );
        const expected: Message = { ...created, content: 'edited', updatedAt: now, version: 2 };
        assert.deepEqual(result, { message: expected, changed: true });
        assert.deepEqual(await store.messages.get(created.id), expected);
      });

      test('the check sees the current message and runs inside the transaction', async (store) => {
        const created = await store.messages.create(newMessage());
        const seen: Message[] = [];
        // Two racing edits that each allow only version 1: if the check ran
        // outside the write's transaction, both could pass.
        const onlyFromVersion1 = (current: Message) => {
          seen.push(current);
          if (current.version !== 1) {
            throw new AppError(ErrorKinds.versionConflict, 'not version 1');
          }
        };
        const results = await Promise.allSettled([
          store.messages.update(
            created.id,
            { content: 'first', now: nextTime(), editedBy: null },
            onlyFromVersion1,
          ),
          store.messages.update(
            created.id,
            { content: 'second', now: nextTime(), editedBy: null },
            onlyFromVersion1,
          ),
        ]);
        const fulfilled = results.filter((r) => r.status === 'fulfilled');
        const rejected = results.filter((r) => r.status === 'rejected');
        assert.equal(fulfilled.length, 1);
        assert.equal(rejected.length, 1);
        assert.equal(
          (rejected[0] as PromiseRejectedResult).reason.kind,
          ErrorKinds.versionConflict,
        );
        assert.deepEqual(seen[0], created);
        assert.equal(seen[1]?.version, 2, 'the second check saw the first edit');
        assert.equal((await store.messages.get(created.id))?.version, 2);
        assert.equal((await store.changes.bounds()).latest, 2);
      });

      test('a check that throws stops the write: nothing stored, no change, the error as thrown', async (store) => {
        const created = await store.messages.create(newMessage());
        const refusal = new AppError(ErrorKinds.forbidden, 'no');
        await assert.rejects(
          store.messages.update(
            created.id,
            { content: 'edited', now: nextTime(), editedBy: null },
            () => {
              throw refusal;
            },
          ),
          (error) => error === refusal,
        );
        assert.deepEqual(await store.messages.get(created.id), created);
        assert.equal((await store.changes.bounds()).latest, 1);
      });

      test('the same content changes nothing: changed false, no change row', async (store) => {
        const created = await store.messages.create(newMessage({ content: 'same' }));
        const before = await store.changes.bounds();
        let checked = 0;
        const result = await store.messages.update(
          created.id,
          { content: 'same', now: nextTime(), editedBy: null },
          () => {
            checked += 1;
          },
        );
        assert.deepEqual(result, { message: created, changed: false });
        assert.equal(checked, 1, 'the check still runs (403/409/412 apply to a no-op edit)');
        assert.deepEqual(await store.messages.get(created.id), created);
        assert.deepEqual(await store.changes.bounds(), before);
        assert.equal((await store.changes.since(before.latest, 10)).length, 0);
      });

      test('an unknown id is undefined and the check never runs', async (store) => {
        let checked = false;
        const result = await store.messages.update(
          uuidv7(),
          { content: 'x', now: nextTime(), editedBy: null },
          () => {
            checked = true;
          },
        );
        assert.equal(result, undefined);
        assert.equal(checked, false);
        assert.equal((await store.changes.bounds()).latest, 0);
      });
    });

    describe('delete', () => {
      test('returns the message as it was, then it is gone', async (store) => {
        const created = await store.messages.create(newMessage());
        const edited = (await store.messages.update(
          created.id,
          { content: 'edited', now: nextTime(), editedBy: null },
          noCheck,
        ))!.message;
        const deleted = await store.messages.delete(created.id, noCheck);
        assert.deepEqual(deleted, edited);
        assert.equal(await store.messages.get(created.id), undefined);
        assert.equal(await store.messages.delete(created.id, noCheck), undefined);
        assert.equal(
          await store.messages.update(
            created.id,
            { content: 'again', now: nextTime(), editedBy: null },
            noCheck,
          ),
          undefined,
        );
        assert.deepEqual(await listed(store, { order: 'asc', limit: 10 }), []);
      });

      test('the check sees the current message; a throwing check keeps it', async (store) => {
        const created = await store.messages.create(newMessage());
        let seen: Message | undefined;
        await assert.rejects(
          store.messages.delete(created.id, (current) => {
            seen = current;
            throw new AppError(ErrorKinds.preconditionFailed, 'stale');
          }),
          (error) => isAppError(error) && error.status === 412,
        );
        assert.deepEqual(seen, created);
        assert.deepEqual(await store.messages.get(created.id), created);
        assert.equal((await store.changes.bounds()).latest, 1);
      });

      test('an unknown id is undefined, with no change', async (store) => {
        assert.equal(await store.messages.delete(uuidv7(), noCheck), undefined);
        assert.equal((await store.changes.bounds()).latest, 0);
      });
    });

    describe('replies and revisions', () => {
      test('a reply is stored only to a stored message of its room, judged in the create', async (store) => {
        const parent = await store.messages.create(newMessage({ room: 'a' }));
        const reply = await store.messages.create(newMessage({ room: 'a', replyTo: parent.id }));
        assert.equal(reply.replyTo, parent.id);
        assert.equal((await store.messages.get(reply.id))?.replyTo, parent.id);
        const refused = (draft: NewMessage) =>
          assert.rejects(
            store.messages.create(draft),
            (error) => isAppError(error) && error.status === 400 && error.errors?.[0] !== undefined,
          );
        await refused(newMessage({ room: 'b', replyTo: parent.id }));
        await refused(newMessage({ room: 'a', replyTo: uuidv7() }));
        await store.messages.delete(parent.id, noCheck);
        await refused(newMessage({ room: 'a', replyTo: parent.id }));
        // Nothing of the refused ones: no message, no change, no room b.
        assert.deepEqual(
          (await listed(store, { order: 'asc', limit: 10 })).map((m) => m.id),
          [reply.id],
        );
        assert.equal(await store.rooms.get('b'), undefined);
        assert.deepEqual(
          messageChanges(await store.changes.since(0, 100)).map((c) => c.kind),
          ['message.created', 'message.created', 'message.deleted'],
        );
        // The thread outlives its parent.
        assert.deepEqual(
          (await listed(store, { order: 'asc', limit: 10, replyTo: parent.id })).map((m) => m.id),
          [reply.id],
        );
      });

      test('creates in one group commit: a bad reply fails alone', async (store) => {
        const parent = await store.messages.create(newMessage({ room: 'a' }));
        const results = await Promise.allSettled([
          store.messages.create(newMessage({ room: 'a', replyTo: parent.id })),
          store.messages.create(newMessage({ room: 'a', replyTo: uuidv7() })),
          store.messages.create(newMessage({ room: 'a' })),
          store.messages.create(newMessage({ room: 'b', replyTo: parent.id })),
        ]);
        assert.deepEqual(
          results.map((r) => r.status),
          ['fulfilled', 'rejected', 'fulfilled', 'rejected'],
        );
        assert.equal((await listed(store, { order: 'asc', limit: 10 })).length, 3);
      });

      test('an edit keeps the version it replaces and its own, in its transaction; a delete takes them', async (store) => {
        const draft = newMessage({ author: 'ada', content: 'one' });
        const created = await store.messages.create(draft);
        const page = (after = 0, limit = 10) => store.messages.revisions(created.id, after, limit);
        assert.deepEqual(await page(), {
          room: 'general',
          revisions: [
            { version: 1, content: 'one', updatedAt: created.createdAt, editedBy: 'ada' },
          ],
          more: false,
        });
        const t2 = nextTime();
        await store.messages.update(
          created.id,
          { content: 'two', now: t2, editedBy: 'bob' },
          noCheck,
        );
        // A refused edit keeps nothing.
        await assert.rejects(
          store.messages.update(
            created.id,
            { content: 'x', now: nextTime(), editedBy: 'eve' },
            () => {
              throw new AppError(ErrorKinds.forbidden, 'no');
            },
          ),
        );
        await store.messages.update(
          created.id,
          { content: 'two', now: nextTime(), editedBy: 'eve' },
          noCheck,
        );
        const t3 = nextTime();
        await store.messages.update(
          created.id,
          { content: 'three', now: t3, editedBy: null },
          noCheck,
        );
        assert.deepEqual((await page())?.revisions, [
          { version: 1, content: 'one', updatedAt: created.createdAt, editedBy: 'ada' },
          { version: 2, content: 'two', updatedAt: t2, editedBy: 'bob' },
          { version: 3, content: 'three', updatedAt: t3, editedBy: null },
        ]);
        assert.deepEqual(await page(1, 1), {
          room: 'general',
          revisions: [{ version: 2, content: 'two', updatedAt: t2, editedBy: 'bob' }],
          more: true,
        });
        assert.equal((await page(2, 1))?.more, false);
        assert.deepEqual((await page(3))?.revisions, []);

        await store.messages.delete(created.id, noCheck);
        assert.equal(await page(), undefined);
        // The same id stored again (as only a store can) has no version of the old one left.
        await store.messages.create({ ...draft, content: 'anew' });
        assert.deepEqual((await page())?.revisions, [
          { version: 1, content: 'anew', updatedAt: draft.createdAt, editedBy: 'ada' },
        ]);
      });
    });

    describe('list (keyset on id)', () => {
      /** 10 messages in two rooms, in id order. */
      async function seed(store: Store): Promise<Message[]> {
        const out: Message[] = [];
        for (let i = 0; i < 10; i += 1) {
          out.push(
            await store.messages.create(
              newMessage({ room: i % 2 === 0 ? 'even' : 'odd', content: `m${i}` }),
            ),
          );
        }
        return out;
      }
      const ids = (ms: readonly Message[]) => ms.map((m) => m.id);

      test('ascending and descending id order, limit cuts the page', async (store) => {
        const all = await seed(store);
        assert.deepEqual(await listed(store, { order: 'asc', limit: 100 }), all);
        assert.deepEqual(
          ids(await listed(store, { order: 'desc', limit: 100 })),
          ids(all).reverse(),
        );
        assert.deepEqual(
          ids(await listed(store, { order: 'asc', limit: 3 })),
          ids(all.slice(0, 3)),
        );
        assert.deepEqual(
          ids(await listed(store, { order: 'desc', limit: 3 })),
          ids(all.slice(7)).reverse(),
        );
      });

      test('room filters', async (store) => {
        const all = await seed(store);
        const even = all.filter((m) => m.room === 'even');
        assert.deepEqual(await listed(store, { order: 'asc', limit: 100, room: 'even' }), even);
        assert.deepEqual(await listed(store, { order: 'asc', limit: 100, room: 'none' }), []);
      });

      test('after and before are exclusive bounds, combinable with room and order', async (store) => {
        const all = await seed(store);
        const [a, b] = [all[2]!.id, all[7]!.id];
        assert.deepEqual(
          ids(await listed(store, { order: 'asc', limit: 100, after: a })),
          ids(all.slice(3)),
        );
        assert.deepEqual(
          ids(await listed(store, { order: 'asc', limit: 100, before: b })),
          ids(all.slice(0, 7)),
        );
        assert.deepEqual(
          ids(await listed(store, { order: 'desc', limit: 100, after: a, before: b })),
          ids(all.slice(3, 7)).reverse(),
        );
        assert.deepEqual(
          ids(await listed(store, { order: 'asc', limit: 2, after: a, before: b, room: 'odd' })),
          [all[3]!.id, all[5]!.id],
        );
      });

      test('a bound that is not stored still works as a bound', async (store) => {
        const all = await seed(store);
        const between = uuidv7(); // newer than every seeded id
        assert.deepEqual(await listed(store, { order: 'asc', limit: 100, after: between }), []);
        assert.deepEqual(
          ids(await listed(store, { order: 'asc', limit: 100, before: between })),
          ids(all),
        );
        const lowest = '00000000-0000-0000-0000-000000000000';
        const highest = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
        assert.deepEqual(
          ids(await listed(store, { order: 'asc', limit: 100, after: lowest })),
          ids(all),
        );
        assert.deepEqual(
          ids(await listed(store, { order: 'desc', limit: 100, before: highest })),
          ids(all).reverse(),
        );
      });

      test('ids: only those messages, unknown ones absent, in the query order', async (store) => {
        const all = await seed(store);
        const wanted = [all[8]!.id, all[1]!.id, uuidv7(), all[4]!.id];
        assert.deepEqual(ids(await listed(store, { order: 'asc', limit: 100, ids: wanted })), [
          all[1]!.id,
          all[4]!.id,
          all[8]!.id,
        ]);
        assert.deepEqual(
          ids(await listed(store, { order: 'desc', limit: 2, ids: wanted, room: 'even' })),
          [all[8]!.id, all[4]!.id],
        );
        assert.deepEqual(await listed(store, { order: 'asc', limit: 100, ids: [] }), []);
      });

      test("each listed message is messageJson's bytes of the message, also after an edit", async (store) => {
        const tricky = [
          'tab\there, LF\nand CR\r\n',
          'quotes " and backslash \\ and slash /',
          'emoji 😀 👩‍👩‍👧 🇩🇪 👍🏽, é, ß ẞ İ ﬁ, \u2028\u2029, <b>&amp;</b>',
          'DEL \u007f is not a Cc escape in JSON',
        ];
        const created: Message[] = [];
        for (const content of tricky)
          created.push(await store.messages.create(newMessage({ content })));
        const edited = (await store.messages.update(
          created[1]!.id,
          { content: 'edited \t "x"', now: nextTime(), editedBy: null },
          noCheck,
        ))!;
        created[1] = edited.message;
        const page = await store.messages.list({ order: 'asc', limit: 10 });
        assert.equal(page.json, created.map((m) => messageJson(m)).join(','));
        for (const m of created) assert.deepEqual(await store.messages.get(m.id), m);
      });

      test('a page says its count, its last id, whether more lie beyond, and the latest change', async (store) => {
        const empty = await store.messages.list({ order: 'asc', limit: 5 });
        assert.deepEqual(empty, {
          json: '',
          count: 0,
          lastId: undefined,
          more: false,
          latestSeq: (await store.changes.bounds()).latest,
        });
        const all = await seed(store);
        const latest = (await store.changes.bounds()).latest;
        assert.ok(latest > 0);
        for (const order of ['asc', 'desc'] as const) {
          const sorted = order === 'asc' ? all : [...all].reverse();
          const cut = await store.messages.list({ order, limit: 3 });
          assert.equal(cut.count, 3);
          assert.equal(cut.lastId, sorted[2]!.id);
          assert.equal(cut.more, true);
          assert.equal(cut.latestSeq, latest);
          const exact = await store.messages.list({ order, limit: all.length });
          assert.equal(exact.count, all.length);
          assert.equal(exact.more, false, 'a page that ends exactly at the last message');
          assert.equal(exact.lastId, sorted[sorted.length - 1]!.id);
          const byIds = await store.messages.list({
            order,
            limit: 2,
            ids: all.slice(0, 3).map((m) => m.id),
          });
          assert.equal(byIds.count, 2);
          assert.equal(byIds.more, true);
          assert.equal(
            byIds.lastId,
            (order === 'asc' ? all.slice(0, 3) : all.slice(0, 3).reverse())[1]!.id,
          );
          assert.equal(byIds.latestSeq, latest);
        }
        const noneById = await store.messages.list({ order: 'asc', limit: 2, ids: [uuidv7()] });
        assert.deepEqual(noneById, {
          json: '',
          count: 0,
          lastId: undefined,
          more: false,
          latestSeq: latest,
        });
      });

      test('pages asked for at once are each the page it would be alone', async (store) => {
        const all = await seed(store);
        const queries = [
          { order: 'desc' as const, limit: 3, before: all[7]!.id },
          { order: 'desc' as const, limit: 2, before: all[9]!.id },
          { order: 'desc' as const, limit: 50, before: all[1]!.id },
          { order: 'asc' as const, limit: 4, room: 'even' },
          { order: 'asc' as const, limit: 2, room: 'odd', after: all[0]!.id },
          { order: 'asc' as const, limit: 2, room: 'none' },
        ];
        const together = await Promise.all(queries.map((q) => store.messages.list(q)));
        for (const [i, q] of queries.entries()) {
          assert.deepEqual(together[i], await store.messages.list(q), JSON.stringify(q));
        }
        assert.equal(together[0]!.lastId, all[4]!.id);
        assert.equal(together[2]!.count, 1);
      });

      test('returned ids are lowercase', async (store) => {
        await seed(store);
        for (const m of await listed(store, { order: 'asc', limit: 100 })) {
          assert.equal(m.id, m.id.toLowerCase());
        }
      });

      test('id order is the order of creation (ids handed out in sequence)', async (store) => {
        const created: Message[] = [];
        for (let i = 0; i < 30; i += 1) created.push(await store.messages.create(newMessage()));
        assert.deepEqual(ids(await listed(store, { order: 'asc', limit: 100 })), ids(created));
      });
    });

    describe('around (the page centred on a message)', () => {
      /**
       * 10 messages in two rooms, in id order; every third says "needle"; the
       * even ones from the third on reply to the first (a thread in room even).
       */
      async function seed(store: Store): Promise<Message[]> {
        const out: Message[] = [];
        for (let i = 0; i < 10; i += 1) {
          const content = i % 3 === 0 ? `needle ${i}` : `hay ${i}`;
          const replyTo = i >= 2 && i % 2 === 0 ? out[0]!.id : null;
          out.push(
            await store.messages.create(
              newMessage({ room: i % 2 === 0 ? 'even' : 'odd', content, replyTo }),
            ),
          );
        }
        return out;
      }

      /** The rule, stated independently: ⌈n/2⌉ ids <= around, ⌊n/2⌋ ids > around, nearest. */
      function model(selected: readonly Message[], around: string, n: number, order: ListOrder) {
        const low = selected.filter((m) => m.id <= around);
        const high = selected.filter((m) => m.id > around);
        const asc = [...low.slice(-Math.ceil(n / 2)), ...high.slice(0, Math.floor(n / 2))];
        const page = order === 'asc' ? asc : [...asc].reverse();
        const lowBeyond = low.length > Math.ceil(n / 2);
        const highBeyond = high.length > Math.floor(n / 2);
        return {
          json: page.map((m) => messageJson(m)).join(','),
          count: page.length,
          lastId: page[page.length - 1]?.id,
          more: order === 'asc' ? highBeyond : lowBeyond,
          moreBefore: order === 'asc' ? lowBeyond : highBeyond,
        };
      }

      test('both halves joined in the requested order, without their extra rows, with what lies beyond each end and the latest change', async (store) => {
        const all = await seed(store);
        const latest = (await store.changes.bounds()).latest;
        const filters: { query: Omit<ListQuery, 'order'>; selects: (m: Message) => boolean }[] = [
          { query: {}, selects: () => true },
          { query: { room: 'odd' }, selects: (m) => m.room === 'odd' },
          { query: { readableBy: 'ada' }, selects: () => true },
          { query: { replyTo: all[0]!.id }, selects: (m) => m.replyTo === all[0]!.id },
          {
            query: { room: 'even', replyTo: all[0]!.id, readableBy: 'ada' },
            selects: (m) => m.replyTo === all[0]!.id,
          },
          {
            query: { ids: [all[1]!.id, all[4]!.id, all[5]!.id, all[8]!.id] },
            selects: (m) => [1, 4, 5, 8].some((i) => all[i]!.id === m.id),
          },
          {
            query: { q: searchQuery('needle', false) },
            selects: (m) => m.content.startsWith('needle'),
          },
          {
            query: { room: 'even', q: searchQuery('needle', true) },
            selects: (m) => m.room === 'even' && m.content.startsWith('needle'),
          },
        ];
        const arounds = [all[0]!.id, all[4]!.id, all[5]!.id, all[9]!.id, uuidv7()];
        for (const { query, selects } of filters) {
          for (const around of [...arounds, '00000000-0000-0000-0000-000000000000']) {
            for (const limit of [1, 2, 3, 4, 7, 100]) {
              for (const order of ['asc', 'desc'] as const) {
                const got = await store.messages.around({ ...query, order, limit }, around);
                const want = model(all.filter(selects), around, limit, order);
                const label = JSON.stringify({ query, around, limit, order });
                assert.deepEqual(got, { ...want, latestSeq: latest }, label);
              }
            }
          }
        }
      });

      test('around pages asked for at once are each the page they would be alone', async (store) => {
        const all = await seed(store);
        const queries: [ListQuery & { limit: number }, string][] = [
          [{ order: 'desc', limit: 4 }, all[5]!.id],
          [{ order: 'desc', limit: 3 }, all[1]!.id],
          [{ order: 'desc', limit: 50 }, all[8]!.id],
          [{ order: 'asc', limit: 4, room: 'even' }, all[3]!.id],
          [{ order: 'asc', limit: 2, room: 'odd' }, all[0]!.id],
          [{ order: 'asc', limit: 2, room: 'none' }, all[0]!.id],
          // Two id lists in one turn: each an array already (PostgreSQL reads them alone).
          [{ order: 'desc', limit: 3, ids: [all[2]!.id, all[4]!.id, all[6]!.id] }, all[4]!.id],
          [{ order: 'desc', limit: 2, ids: [all[1]!.id, all[3]!.id] }, all[1]!.id],
          [{ order: 'desc', limit: 4, replyTo: all[0]!.id }, all[6]!.id],
        ];
        const together = await Promise.all(queries.map(([q, id]) => store.messages.around(q, id)));
        for (const [i, [q, id]] of queries.entries()) {
          assert.deepEqual(together[i], await store.messages.around(q, id), JSON.stringify(q));
        }
        assert.equal(together[0]!.count, 4);
        assert.equal(together[0]!.lastId, all[4]!.id);
        assert.equal(together[6]!.count, 3);
        assert.equal(together[7]!.count, 2);
      });

      test('around on an empty store: an empty page, nothing beyond either end', async (store) => {
        for (const order of ['asc', 'desc'] as const) {
          for (const limit of [1, 2, 50]) {
            assert.deepEqual(await store.messages.around({ order, limit }, uuidv7()), {
              json: '',
              count: 0,
              lastId: undefined,
              more: false,
              moreBefore: false,
              latestSeq: 0,
            });
          }
        }
      });
    });

    describe('change log', () => {
      test('an empty log: latest 0, purgedThrough 0, no changes', async (store) => {
        assert.deepEqual(await store.changes.bounds(), { latest: 0, purgedThrough: 0 });
        assert.deepEqual(await store.changes.since(0, 10), []);
      });

      test('one change per write, seq strictly increasing, carrying the message', async (store) => {
        const created = await store.messages.create(newMessage());
        const updated = (await store.messages.update(
          created.id,
          { content: 'v2', now: nextTime(), editedBy: null },
          noCheck,
        ))!.message;
        await store.messages.update(
          created.id,
          { content: 'v2', now: nextTime(), editedBy: null },
          noCheck,
        ); // no-op: no change
        const deleted = (await store.messages.delete(created.id, noCheck))!;
        const other = await store.messages.create(newMessage({ room: 'other' }));
        const changes = messageChanges(await store.changes.since(0, 100));
        assert.deepEqual(
          changes.map((c) => [c.kind, c.message]),
          [
            ['message.created', created],
            ['message.updated', updated],
            ['message.deleted', deleted],
            ['message.created', other],
          ],
        );
        for (let i = 1; i < changes.length; i += 1) {
          assert.ok(changes[i]!.seq > changes[i - 1]!.seq, 'seq strictly increases');
        }
        assert.equal((await store.changes.bounds()).latest, changes.at(-1)!.seq);
      });

      test('changesSince: only seq > after, at most limit, in seq order', async (store) => {
        for (let i = 0; i < 5; i += 1) await store.messages.create(newMessage());
        const all = await store.changes.since(0, 100);
        assert.equal(all.length, 5);
        const seqs = all.map((c) => c.seq);
        assert.deepEqual(
          (await store.changes.since(seqs[1]!, 2)).map((c) => c.seq),
          seqs.slice(2, 4),
        );
        assert.deepEqual(await store.changes.since(seqs[4]!, 10), []);
        assert.equal(typeof seqs[0], 'number');
      });

      test('a rolled-back write leaves no change and no gap in what readers see', async (store) => {
        const created = await store.messages.create(newMessage());
        await assert.rejects(
          store.messages.update(
            created.id,
            { content: 'x', now: nextTime(), editedBy: null },
            () => {
              throw new AppError(ErrorKinds.forbidden, 'no');
            },
          ),
        );
        const changes = await store.changes.since(0, 10);
        assert.deepEqual(
          changes.map((c) => c.kind),
          ['message.created'],
        );
      });

      test('purge keeps the newest change and records purgedThrough', async (store) => {
        for (let i = 0; i < 4; i += 1) await store.messages.create(newMessage());
        const before = await store.changes.since(0, 100);
        const future = new Date(Date.now() + 3_600_000);
        await store.changes.purge(future);
        const after = await store.changes.since(0, 100);
        assert.deepEqual(after, [before.at(-1)]);
        assert.deepEqual(await store.changes.bounds(), {
          latest: before.at(-1)!.seq,
          purgedThrough: before.at(-2)!.seq,
        });
        // A second purge has nothing to do: the newest change stays.
        await store.changes.purge(future);
        assert.deepEqual(await store.changes.since(0, 100), after);
        assert.equal((await store.changes.bounds()).purgedThrough, before.at(-2)!.seq);
        // Sequence numbers go on from where they were, never reused.
        await store.messages.create(newMessage());
        const next = await store.changes.since(before.at(-1)!.seq, 10);
        assert.equal(next.length, 1);
        assert.ok(next[0]!.seq > before.at(-1)!.seq);
      });

      test('purge with a cutoff in the past keeps every newer change', async (store) => {
        for (let i = 0; i < 3; i += 1) await store.messages.create(newMessage());
        const before = await store.changes.since(0, 100);
        await store.changes.purge(new Date(Date.now() - 3_600_000));
        assert.deepEqual(await store.changes.since(0, 100), before);
        assert.equal((await store.changes.bounds()).purgedThrough, 0);
      });
    });

    describe('idempotency keys', () => {
      test('claim, then in flight, then the kept outcome replays', async (store) => {
        const first = claimOf('k1');
        assert.deepEqual(await store.idempotency.claim(first, timing(0)), { kind: 'claimed' });
        assert.deepEqual(await store.idempotency.claim(claimOf('k1'), timing(1)), {
          kind: 'in-flight',
        });
        await store.idempotency.complete(first, { status: 400, body: '{"x":1}' });
        assert.deepEqual(await store.idempotency.claim(claimOf('k1'), timing(2)), {
          kind: 'replay',
          status: 400,
          body: '{"x":1}',
        });
      });

      test('a different request body is a mismatch, while in flight or kept', async (store) => {
        const first = claimOf('k', 'hash-a');
        await store.idempotency.claim(first, timing(0));
        // In flight wins: the outcome of the first is not known yet.
        assert.equal(
          (await store.idempotency.claim(claimOf('k', 'hash-b'), timing(1))).kind,
          'in-flight',
        );
        await store.idempotency.complete(first, { status: 201, body: '{}' });
        assert.deepEqual(await store.idempotency.claim(claimOf('k', 'hash-b'), timing(2)), {
          kind: 'mismatch',
        });
      });

      test('create with a claim keeps its 201 and the message atomically', async (store) => {
        const claim = claimOf('create-key');
        await store.idempotency.claim(claim, timing(0));
        const created = await store.messages.create(newMessage(), claim);
        const outcome = await store.idempotency.claim(claimOf('create-key'), timing(1));
        assert.equal(outcome.kind, 'replay');
        assert.equal(outcome.kind === 'replay' && outcome.status, 201);
        assert.deepEqual(outcome.kind === 'replay' && JSON.parse(outcome.body), created);
      });

      test('release frees the key; only the claim holder releases', async (store) => {
        const first = claimOf('k');
        await store.idempotency.claim(first, timing(0));
        await store.idempotency.release(claimOf('k')); // another token: no effect
        assert.equal((await store.idempotency.claim(claimOf('k'), timing(1))).kind, 'in-flight');
        await store.idempotency.release(first);
        assert.equal(
          (await store.idempotency.claim(claimOf('k', 'hash-b'), timing(2))).kind,
          'claimed',
        );
      });

      test('release does not forget a kept outcome', async (store) => {
        const first = claimOf('k');
        await store.idempotency.claim(first, timing(0));
        await store.idempotency.complete(first, { status: 201, body: '{}' });
        await store.idempotency.release(first);
        assert.equal((await store.idempotency.claim(claimOf('k'), timing(1))).kind, 'replay');
      });

      test('an abandoned in-flight claim expires after inFlightMs and may be taken over', async (store) => {
        const crashed = claimOf('k');
        await store.idempotency.claim(crashed, timing(0));
        assert.equal(
          (await store.idempotency.claim(claimOf('k'), timing(29_999))).kind,
          'in-flight',
        );
        const successor = claimOf('k', 'hash-b');
        assert.equal((await store.idempotency.claim(successor, timing(30_000))).kind, 'claimed');
        // The old owner can no longer complete or release it.
        await store.idempotency.complete(crashed, { status: 201, body: '"old"' });
        await store.idempotency.release(crashed);
        assert.equal(
          (await store.idempotency.claim(claimOf('k', 'hash-b'), timing(30_001))).kind,
          'in-flight',
        );
        await store.idempotency.complete(successor, { status: 201, body: '"new"' });
        assert.deepEqual(await store.idempotency.claim(claimOf('k', 'hash-b'), timing(30_002)), {
          kind: 'replay',
          status: 201,
          body: '"new"',
        });
      });

      test('a kept outcome lives ttlMs, then the key is free again', async (store) => {
        const first = claimOf('k');
        await store.idempotency.claim(first, timing(0));
        await store.idempotency.complete(first, { status: 201, body: '{}' });
        const day = 86_400_000;
        assert.equal((await store.idempotency.claim(claimOf('k'), timing(day - 1))).kind, 'replay');
        assert.equal(
          (await store.idempotency.claim(claimOf('k', 'hash-b'), timing(day))).kind,
          'claimed',
        );
      });

      test('keys are scoped: the same key in another scope is another key', async (store) => {
        const alice = claimOf('k', 'hash-a', 'alice');
        await store.idempotency.claim(alice, timing(0));
        assert.equal(
          (await store.idempotency.claim(claimOf('k', 'hash-a', 'bob'), timing(1))).kind,
          'claimed',
        );
        assert.equal(
          (await store.idempotency.claim(claimOf('k', 'hash-a', ''), timing(1))).kind,
          'claimed',
        );
      });

      test('racing claims of one key: exactly one is claimed', async (store) => {
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, () => store.idempotency.claim(claimOf('race'), timing(0))),
        );
        assert.equal(outcomes.filter((o) => o.kind === 'claimed').length, 1);
        assert.equal(outcomes.filter((o) => o.kind === 'in-flight').length, 7);
      });

      test('purge forgets outcomes claimed before the cutoff, keeps newer ones', async (store) => {
        const old = claimOf('old');
        const recent = claimOf('recent');
        await store.idempotency.claim(old, timing(0));
        await store.idempotency.complete(old, { status: 201, body: '{}' });
        await store.idempotency.claim(recent, timing(60_000));
        await store.idempotency.complete(recent, { status: 201, body: '{}' });
        await store.idempotency.purge(new Date(T0.getTime() + 30_000));
        // With a year of ttl only the purge can explain a free key.
        const long = { ...timing(61_000), ttlMs: 365 * 86_400_000 };
        assert.equal(
          (await store.idempotency.claim(claimOf('old', 'hash-b'), long)).kind,
          'claimed',
        );
        assert.equal((await store.idempotency.claim(claimOf('recent'), long)).kind, 'replay');
      });

      test('keys of 255 printable ASCII characters, quotes and backslashes included', async (store) => {
        const key = ' !"#$%&\'()*+,-./\\:;<=>?@[]^_`{|}~'.padEnd(255, 'z');
        const claim = claimOf(key);
        assert.equal((await store.idempotency.claim(claim, timing(0))).kind, 'claimed');
        await store.idempotency.complete(claim, { status: 201, body: '{}' });
        assert.equal((await store.idempotency.claim(claimOf(key), timing(1))).kind, 'replay');
      });
    });

    describe('lifecycle', () => {
      test('migrate() again is a no-op that keeps the data', async (store) => {
        const created = await store.messages.create(newMessage());
        await store.migrate();
        await store.migrate();
        assert.deepEqual(await store.messages.get(created.id), created);
        assert.equal((await store.changes.bounds()).latest, 1);
      });

      test('a second store on the same database sees the data after its migrate()', async (store, db) => {
        const created = await store.messages.create(newMessage());
        if (engine.name === 'sqlite') await store.close(); // a SQLite file belongs to one process
        const again = openStore(db.url);
        try {
          await again.migrate();
          assert.deepEqual(await again.messages.get(created.id), created);
        } finally {
          await again.close();
        }
      });

      test('ping resolves once migrated; before migrate() it is a 503', async (store, db) => {
        if (engine.name === 'sqlite') await store.close(); // a SQLite file belongs to one store
        const fresh = openStore(db.url);
        try {
          await assert.rejects(fresh.ping(), (e) => isAppError(e) && e.status === 503);
          await fresh.migrate();
          await fresh.ping();
        } finally {
          await fresh.close();
        }
      });

      test('close() may be called twice', async (store, db) => {
        if (engine.name === 'sqlite') await store.close();
        const extra = openStore(db.url);
        await extra.migrate();
        await extra.close();
        await assert.doesNotReject(extra.close());
      });
    });

    if (engine.name === 'sqlite') {
      describe('one store per file (SQLite)', () => {
        test('a second store on an open file is refused, and opens once the first is closed', async (store, db) => {
          const waitMs = 50;
          assert.throws(
            () => openStoreWith(db.url, { ...settings, sqliteInstanceWaitMs: waitMs }),
            (e: Error) =>
              e.name === 'SqliteFileInUse' && /is in use by another process/.test(e.message),
          );
          // The refused store left the first untouched.
          const kept = await store.messages.create(newMessage());
          await store.close();
          const next = openStoreWith(db.url, { ...settings, sqliteInstanceWaitMs: waitMs });
          try {
            await next.migrate();
            assert.deepEqual(await next.messages.get(kept.id), kept);
          } finally {
            await next.close();
          }
        });
      });
    }

    if (engine.name === 'postgres') {
      describe('several instances (PostgreSQL)', () => {
        it(
          'several stores migrating the same fresh schema at once all succeed',
          { skip },
          async () => {
            const db = await engine.createDatabase();
            const stores = Array.from({ length: 5 }, () => openStore(db.url));
            try {
              const results = await Promise.allSettled(stores.map((s) => s.migrate()));
              assert.deepEqual(
                results.map((r) => r.status),
                stores.map(() => 'fulfilled'),
                JSON.stringify(results.filter((r) => r.status === 'rejected')),
              );
              const created = await stores[0]!.messages.create(newMessage());
              for (const s of stores) assert.deepEqual(await s.messages.get(created.id), created);
            } finally {
              await Promise.all(stores.map((s) => s.close()));
              await db.cleanup();
            }
          },
        );

        test('a change written by one instance is read by another, and wakes it', async (store, db) => {
          const other = openStore(db.url);
          await other.migrate();
          let woken = 0;
          let resolveWake: () => void = () => undefined;
          const stop = other.changes.watch(() => {
            woken += 1;
            resolveWake();
          });
          try {
            // The first wake comes once the listener is connected.
            await new Promise<void>((resolve) => {
              resolveWake = resolve;
              if (woken > 0) resolve();
            });
            const wokenBefore = woken;
            const woke = new Promise<void>((resolve) => {
              resolveWake = resolve;
            });
            const created = await store.messages.create(newMessage());
            await woke;
            assert.ok(woken > wokenBefore);
            assert.deepEqual(
              messageChanges(await other.changes.since(0, 10)).map((c) => c.message),
              [created],
            );
          } finally {
            await stop();
            await other.close();
          }
        });
      });
    }
  });
}
