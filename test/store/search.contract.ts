/**
 * Search (`q`) on the message store, as one suite run once per engine: the
 * matching rule, every combination with the other list conditions and the
 * access rule, pages, edits and deletes, and both ways to the rows (an
 * ordered walk, and the index for a term the walk finds too rarely).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { ListQuery, Message, NewMessage } from '../../src/domain/message.ts';
import { searchQuery, searchText } from '../../src/domain/search-text.ts';
import type { Store } from '../../src/domain/store.ts';
import { skipUnlessEngine, type Engine } from '../support/engines.ts';
import { withStore } from '../support/open-store.ts';

let clock = Date.parse('2026-11-22T10:00:00.000Z');
function nextTime(): string {
  clock += 1;
  return new Date(clock).toISOString();
}

function newMessage(content: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    id: uuidv7(),
    room: 'general',
    author: 'ada',
    content,
    createdAt: nextTime(),
    ...overrides,
  };
}

/** Stores the messages one after another (ids in this order) and answers them. */
async function createAll(store: Store, messages: readonly NewMessage[]): Promise<Message[]> {
  const stored: Message[] = [];
  for (const m of messages) stored.push(await store.messages.create(m));
  return stored;
}

type Search = Omit<ListQuery, 'q' | 'order'> & { readonly order?: 'asc' | 'desc' };

/** The ids a search lists, in its order. */
async function found(store: Store, q: string, query: Search = {}): Promise<string[]> {
  const page = await store.messages.list({
    order: 'asc',
    limit: 1000,
    ...query,
    q: searchQuery(q, query.room !== undefined),
  });
  return (JSON.parse(`[${page.json}]`) as Message[]).map((m) => m.id);
}

/** What the rule says, in plain JavaScript: every term in the normalized content. */
function expected(messages: readonly Message[], q: string, inRoom = false): string[] {
  const { terms } = searchQuery(q, inRoom);
  return messages
    .filter((m) => terms.every((t) => searchText(m.content).includes(t)))
    .map((m) => m.id);
}

export function searchContract(engine: Engine): void {
  describe(`Search contract [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);
    const test = (name: string, fn: (store: Store) => Promise<void>) =>
      it(name, { skip }, () => withStore(engine, {}, fn));

    test('every term must be a substring of the normalized content, in any case', async (store) => {
      const [a, b, c, d] = await createAll(store, [
        newMessage('Hello World'),
        newMessage('hello there'),
        newMessage('HELLO'),
        newMessage('a worldly matter'),
      ]).then((ms) => ms.map((m) => m.id));
      assert.deepEqual(await found(store, 'hello'), [a, b, c]);
      assert.deepEqual(await found(store, 'HeLLo world'), [a]);
      assert.deepEqual(await found(store, 'world'), [a, d]);
      // Terms are substrings, in any order, anywhere.
      assert.deepEqual(await found(store, 'orl LLO'), [a]);
      assert.deepEqual(await found(store, 'worldly hello'), []);
      assert.deepEqual(await found(store, 'nothing-like-it'), []);
      // A short term beside a long one.
      assert.deepEqual(await found(store, 'th e hello'), [b]);
    });

    test('characters that mean something to the engines are matched as they are', async (store) => {
      const texts = [
        'say "hi" there',
        '100% sure',
        '100 percent',
        'snake_case name',
        'snakeXcase name',
        'back\\slash path',
        "it's o'clock",
        'a AND b OR c NOT d',
        'star* and caret^ and (parens)',
      ];
      const messages = await createAll(
        store,
        texts.map((t) => newMessage(t)),
      );
      for (const q of [
        '"hi"',
        '"hi" there',
        '100%',
        '0% sure',
        'snake_case',
        'e_c',
        'back\\slash',
        'k\\s',
        "it's",
        "'cl",
        'AND',
        'star*',
        '(parens)',
        'caret^',
        '%%%',
        '___',
      ]) {
        assert.deepEqual(await found(store, q), expected(messages, q), q);
      }
    });

    test('results are in id order, both ways, and pages go on where the last one ended', async (store) => {
      const messages = await createAll(
        store,
        Array.from({ length: 12 }, (_, i) => newMessage(i % 3 === 0 ? `other ${i}` : `match ${i}`)),
      );
      const matching = expected(messages, 'match');
      assert.equal(matching.length, 8);
      assert.deepEqual(await found(store, 'match'), matching);
      assert.deepEqual(await found(store, 'match', { order: 'desc' }), [...matching].reverse());
      const q = searchQuery('MATCH', false);
      const first = await store.messages.list({ order: 'desc', limit: 3, q });
      assert.equal(first.count, 3);
      assert.equal(first.more, true);
      assert.equal(first.lastId, matching[5]);
      const last = await store.messages.list({ order: 'desc', limit: 5, q, before: first.lastId });
      assert.equal(last.count, 5);
      assert.equal(last.more, false);
      assert.equal(last.lastId, matching[0]);
      const exact = await store.messages.list({ order: 'asc', limit: 8, q });
      assert.equal(exact.more, false);
    });

    test('q combines with room, after, before and an id list', async (store) => {
      const messages = await createAll(
        store,
        Array.from({ length: 20 }, (_, i) =>
          newMessage(`${i % 2 === 0 ? 'deploy' : 'lunch'} number ${i}`, {
            room: i % 4 < 2 ? 'ops' : 'general',
          }),
        ),
      );
      const ids = messages.map((m) => m.id);
      const deploys = expected(messages, 'deploy');
      const inOps = (id: string) => messages.find((m) => m.id === id)!.room === 'ops';
      assert.deepEqual(await found(store, 'deploy', { room: 'ops' }), deploys.filter(inOps));
      assert.deepEqual(await found(store, 'deploy', { room: 'nowhere' }), []);
      assert.deepEqual(
        await found(store, 'deploy', { after: ids[4], before: ids[15] }),
        deploys.filter((id) => id > ids[4]! && id < ids[15]!),
      );
      assert.deepEqual(
        await found(store, 'deploy', { room: 'general', after: ids[3], order: 'desc' }),
        deploys.filter((id) => !inOps(id) && id > ids[3]!).reverse(),
      );
      assert.deepEqual(
        await found(store, 'deploy', { ids: [ids[0]!, ids[1]!, ids[2]!, ids[6]!] }),
        [ids[0], ids[2], ids[6]],
      );
      assert.deepEqual(
        await found(store, 'deploy', { ids: [ids[0]!, ids[2]!, ids[4]!], room: 'general' }),
        [ids[2]],
      );
      // Short terms alone, within a room: each row of the room is checked.
      assert.deepEqual(
        await found(store, '1 r', { room: 'ops' }),
        expected(messages, '1 r', true).filter(inOps),
      );
    });

    test('a reader finds nothing of a private room it is not a member of', async (store) => {
      await store.rooms.put('secret', null, 'ada', nextTime(), () => ({
        visibility: 'private',
        topic: '',
      }));
      const [open, hidden] = await createAll(store, [
        newMessage('launch plans'),
        newMessage('launch codes', { room: 'secret' }),
      ]).then((ms) => ms.map((m) => m.id));
      assert.deepEqual(await found(store, 'launch', { readableBy: 'bob' }), [open]);
      assert.deepEqual(await found(store, 'launch', { readableBy: 'ada' }), [open, hidden]);
      assert.deepEqual(await found(store, 'codes', { readableBy: 'bob' }), []);
      assert.deepEqual(await found(store, 'launch'), [open, hidden]);
    });

    test('an edit or a delete is reflected by the next search', async (store) => {
      const [a, b] = await createAll(store, [newMessage('the old words'), newMessage('old times')]);
      assert.deepEqual(await found(store, 'old'), [a!.id, b!.id]);
      const edited = await store.messages.update(
        a!.id,
        { content: 'brand NEW words', now: nextTime(), editedBy: null },
        () => undefined,
      );
      assert.equal(edited?.changed, true);
      assert.deepEqual(await found(store, 'old'), [b!.id]);
      assert.deepEqual(await found(store, 'new words'), [a!.id]);
      await store.messages.delete(b!.id, () => undefined);
      assert.deepEqual(await found(store, 'old'), []);
      assert.deepEqual(await found(store, 'times'), []);
      // A refused edit keeps the indexed text as it was.
      await assert.rejects(
        store.messages.update(
          a!.id,
          { content: 'changed again', now: nextTime(), editedBy: null },
          () => {
            throw new Error('refused');
          },
        ),
        /refused/,
      );
      assert.deepEqual(await found(store, 'new'), [a!.id]);
      assert.deepEqual(await found(store, 'again'), []);
    });

    test('many messages: a rare term, a common one, both, in pages, within bounds', async (store) => {
      // More rows than a walk checks before it turns to the index (SQLite), so both ways run.
      const count = 3000;
      const drafts = Array.from({ length: count }, (_, i) => {
        const words = [`filler ${i}`];
        if (i % 5 === 0) words.push('common');
        if (i === 10 || i === 500 || i === 1200) words.push('zebrafish');
        return newMessage(words.join(' '), { room: i % 2 === 0 ? 'even' : 'odd' });
      });
      await Promise.all(drafts.map((m) => store.messages.create(m)));
      const messages = drafts.map((m) => ({
        ...m,
        updatedAt: m.createdAt,
        version: 1,
        replyTo: null,
      }));
      const rare = expected(messages, 'zebrafish');
      assert.equal(rare.length, 3);
      assert.deepEqual(
        await found(store, 'zebrafish', { order: 'desc', limit: 10 }),
        [...rare].reverse(),
      );
      assert.deepEqual(
        await found(store, 'zebrafish common', { limit: 10 }),
        expected(messages, 'zebrafish common'),
      );
      assert.deepEqual(await found(store, 'ZEBRAFISH', { room: 'odd', limit: 10 }), []);
      assert.deepEqual(
        await found(store, 'zebrafish', { room: 'even', before: drafts[1200]!.id, limit: 10 }),
        [drafts[10]!.id, drafts[500]!.id],
      );
      const page = await store.messages.list({
        order: 'desc',
        limit: 2,
        q: searchQuery('zebrafish', false),
      });
      assert.equal(page.more, true);
      assert.equal(page.lastId, drafts[500]!.id);
      const common = expected(messages, 'common');
      assert.deepEqual(
        await found(store, 'common', { order: 'desc', limit: 50 }),
        [...common].reverse().slice(0, 50),
      );
      assert.deepEqual(await found(store, 'common 99'), expected(messages, 'common 99'));
      assert.deepEqual(
        await found(store, 'filler 12', { room: 'even', order: 'desc' }),
        expected(messages, 'filler 12')
          .filter((id) => drafts.find((m) => m.id === id)!.room === 'even')
          .reverse(),
      );
    });
  });
}
