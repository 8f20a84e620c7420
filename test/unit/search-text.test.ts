/** The one normalization of search, the rules of q's terms, and what SQLite asks its trigram index. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError } from '../../src/errors.ts';
import { searchQuery, searchText } from '../../src/domain/search-text.ts';
import { matchExpression } from '../../src/store/sqlite/search.ts';

test('normalized as NFKC, then lowercased as JavaScript does', () => {
  assert.equal(searchText('STRAẞE'), 'straße');
  assert.equal(searchText('ﬁle'), 'file');
  assert.equal(searchText('ＡＢＣ'), 'abc');
  assert.equal(searchText('İ'), 'i\u0307');
  assert.equal(searchText('cafe\u0301'), 'café');
  assert.equal(searchText('Ⅻ ①'), 'xii 1');
});

test('q: terms split on White_Space, deduplicated; the rules of length and count', () => {
  assert.deepEqual(searchQuery(' Deploy\u00A0FRIDAY\tdeploy ', false).terms, ['deploy', 'friday']);
  assert.deepEqual(searchQuery('ab c', true).terms, ['ab', 'c']);
  assert.deepEqual(searchQuery('ab cde', false).terms, ['ab', 'cde']);
  const refused = (q: string, inRoom = false) =>
    assert.throws(
      () => searchQuery(q, inRoom),
      (e: unknown) =>
        isAppError(e) &&
        e.status === 400 &&
        JSON.stringify(e.errors) === JSON.stringify([{ parameter: 'q', detail: e.detail }]),
      JSON.stringify(q),
    );
  refused('');
  refused('   ');
  refused('x'.repeat(201));
  refused(Array.from({ length: 11 }, () => 'abc').join(' '));
  refused('ab c');
  refused('😀😀');
  refused('abc\u0001');
  refused('abc\uD800');
  assert.equal(searchQuery('😀'.repeat(200), false).terms.length, 1);
});

test('the index is asked trigrams of each long term, as FTS5 strings, a long term spread', () => {
  assert.equal(matchExpression(['abc']), '"abc"');
  assert.equal(matchExpression(['a"bc']), '"a""b" AND """bc"');
  assert.equal(matchExpression(['abcd', 'bcd']), '"abc" AND "bcd"');
  assert.equal(matchExpression(['日本語テ']), '"日本語" AND "本語テ"');
  assert.equal(matchExpression(['🎉🎉🎉']), '"🎉🎉🎉"');
  // 9 trigrams: the first, the last and two between.
  assert.equal(matchExpression(['abcdefghijk']), '"abc" AND "def" AND "fgh" AND "ijk"');
});
