/** The ids right after and right before an id, which make `around`'s inclusive bound an exclusive one. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { idAfter, idBefore } from '../../src/domain/around-page.ts';

it('the next id carries across digits and dashes, and the largest has none', () => {
  assert.equal(
    idAfter('0190f3a2-0000-7000-8000-000000000000'),
    '0190f3a2-0000-7000-8000-000000000001',
  );
  assert.equal(
    idAfter('0190f3a2-0000-7000-8000-00000000000f'),
    '0190f3a2-0000-7000-8000-000000000010',
  );
  assert.equal(
    idAfter('0190f3a2-0000-7000-8fff-ffffffffffff'),
    '0190f3a2-0000-7000-9000-000000000000',
  );
  assert.equal(
    idAfter('0fffffff-ffff-ffff-ffff-ffffffffffff'),
    '10000000-0000-0000-0000-000000000000',
  );
  assert.equal(idAfter('ffffffff-ffff-ffff-ffff-ffffffffffff'), undefined);
});

it('the previous id borrows across digits and dashes, and the smallest has none', () => {
  assert.equal(
    idBefore('0190f3a2-0000-7000-9000-000000000000'),
    '0190f3a2-0000-7000-8fff-ffffffffffff',
  );
  assert.equal(
    idBefore('10000000-0000-0000-0000-000000000000'),
    '0fffffff-ffff-ffff-ffff-ffffffffffff',
  );
  assert.equal(idBefore('00000000-0000-0000-0000-000000000000'), undefined);
});

it('as text, nothing lies between an id and the next one: the order of ids as strings is kept', () => {
  const id = '0190f3a2-0000-7000-8abc-00000000ffff';
  const next = idAfter(id)!;
  assert.ok(id < next);
  assert.equal(idBefore(next), id);
});
