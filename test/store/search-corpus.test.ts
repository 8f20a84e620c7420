/**
 * The same Unicode corpus and the same searches on both stores, each answer
 * compared with a plain JavaScript reference of the rule (normalize both
 * sides, includes()). Newer filler messages come after the corpus, so on
 * SQLite a first page turns from the ordered walk to the trigram index and
 * the pages after it walk again: both ways meet every text here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { Message } from '../../src/domain/message.ts';
import { searchQuery, searchText } from '../../src/domain/search-text.ts';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { withStore } from '../support/open-store.ts';

const LONG = `${'lorem ipsum dolor sit amet '.repeat(60)}needle-at-the-end ✓`;

const CORPUS: readonly string[] = [
  'Die Straße ist lang',
  'DIE STRASSE IST LANG',
  'GROẞE Freude',
  'große freude',
  'İstanbul',
  'istanbul',
  'ISTANBUL',
  'ıstanbul (dotless)',
  'the ﬁnal ﬁle',
  'the final file',
  'oﬃce hours',
  'ＡＢＣ ｈｅｌｌｏ ＷＯＲＬＤ',
  'abc hello world',
  'café au lait',
  'cafe\u0301 decomposed',
  'cafe without accent',
  '東京都に住んでいます',
  '日本語のテキストを検索',
  '中文搜索测试',
  'ｶﾀｶﾅ half-width',
  'カタカナ full-width',
  '한국어 검색 테스트',
  'party 🎉🎉 time',
  'one 🎉 only',
  'family 👩‍👩‍👧 emoji',
  'flag 🇩🇪 here',
  'ΟΔΟΣ κεφαλαία',
  'οδός μικρά',
  'Kelvin 5\u212A',
  '①②③ circled',
  'Chapter Ⅻ',
  'x² squared',
  'ǅemal title case',
  'tab\tand\u00A0nbsp',
  'quote "it" and 100% _under_ back\\slash',
  "it's o'clock",
  LONG,
];

const SEARCHES: readonly string[] = [
  'straße',
  'STRASSE',
  'ẞ',
  'groß',
  'GROẞE',
  'İstanbul',
  'istanbul',
  'ISTANBUL',
  'i̇st',
  'ıst',
  'ﬁnal',
  'final',
  'ﬁ',
  'fi',
  'oﬃce',
  'office',
  'ＡＢＣ',
  'abc hello',
  'ｈｅｌｌｏ ｗｏｒｌｄ',
  'café',
  'cafe\u0301',
  'cafe',
  'é',
  '\u0301',
  '東京',
  '日本語 検索',
  'テキ',
  '中文',
  'ｶﾀｶﾅ',
  'カタカナ',
  '한국어',
  '🎉',
  '🎉🎉',
  '👩‍👩‍👧',
  '👩',
  '🇩🇪',
  'οδος',
  'ΟΔΟΣ',
  'οδός',
  '5k',
  'kelvin',
  '123',
  '①②',
  'xii',
  'ⅻ',
  'x2',
  'ǆemal',
  'and nbsp',
  '"it"',
  '100%',
  '_under_',
  'back\\slash',
  "it's",
  'needle-at-the-end',
  'end ✓',
  'lorem needle',
  'nothing-matches-this',
];

const FILLERS = 2500;

/** Indexes into CORPUS of the messages the rule says match, in id (= corpus) order. */
function expected(q: string): number[] {
  const { terms } = searchQuery(q, true);
  return CORPUS.flatMap((content, i) =>
    terms.every((t) => searchText(content).includes(t)) ? [i] : [],
  );
}

testEachEngine();

function testEachEngine(): void {
  for (const engine of engines) {
    describe(`search corpus [${engine.name}]`, async () => {
      const skip = await skipUnlessEngine(engine);
      it(
        'every search answers what the reference says, both orders, in pages, with and without a room',
        { skip },
        () =>
          withStore(engine, {}, async (store) => {
            let clock = Date.parse('2026-11-23T10:00:00.000Z');
            const at = () => new Date((clock += 1)).toISOString();
            const ids: string[] = [];
            for (const content of CORPUS) {
              const m = await store.messages.create({
                id: uuidv7(),
                room: 'corpus',
                author: 'ada',
                content,
                createdAt: at(),
              });
              ids.push(m.id);
            }
            const fillers = Array.from({ length: FILLERS }, (_, i) => ({
              id: uuidv7(),
              room: 'corpus',
              author: 'ada',
              content: `ququ ${'q'.repeat(i % 7)}`,
              createdAt: at(),
            }));
            await Promise.all(fillers.map((m) => store.messages.create(m)));
            const index = new Map(ids.map((id, i) => [id, i]));

            const pages = async (q: string, order: 'asc' | 'desc', room: string | undefined) => {
              const query = searchQuery(q, room !== undefined);
              const out: number[] = [];
              let bound: string | undefined;
              for (let guard = 0; guard < 100; guard++) {
                const page = await store.messages.list({
                  order,
                  limit: 3,
                  q: query,
                  ...(room === undefined ? {} : { room }),
                  ...(bound === undefined
                    ? {}
                    : order === 'asc'
                      ? { after: bound }
                      : { before: bound }),
                });
                const listed = JSON.parse(`[${page.json}]`) as Message[];
                out.push(...listed.map((m) => index.get(m.id) ?? -1));
                if (!page.more) return out;
                bound = page.lastId;
              }
              assert.fail('paging ends');
            };

            let nonEmpty = 0;
            for (const q of SEARCHES) {
              const want = expected(q);
              if (want.length > 0) nonEmpty++;
              assert.deepEqual(await pages(q, 'desc', 'corpus'), [...want].reverse(), `${q} desc`);
              assert.deepEqual(await pages(q, 'asc', 'corpus'), want, `${q} asc`);
              const { terms } = searchQuery(q, true);
              if (terms.some((t) => [...t].length >= 3)) {
                assert.deepEqual(
                  await pages(q, 'desc', undefined),
                  [...want].reverse(),
                  `${q} everywhere`,
                );
              }
            }
            // The corpus is one that tells the rule apart: most searches find something, not all.
            assert.ok(nonEmpty > SEARCHES.length * 0.8, `${nonEmpty} of ${SEARCHES.length}`);
          }),
      );
    });
  }
}
