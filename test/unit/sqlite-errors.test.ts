/**
 * SQLite's errors, and the system errors of the store's own file work (the
 * log's fdatasync), as the catalogued errors clients see: a full disk is a
 * 507, a failing one a 503, never a 500.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorKinds, isAppError } from '../../src/errors.ts';
import { toStoreError } from '../../src/store/sqlite/errors.ts';

function systemError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: fdatasync`), { code, syscall: 'fdatasync', errno: -5 });
}

test('a failed flush of the log is a 507 when the disk is full, a 503 otherwise', () => {
  for (const [code, kind] of [
    ['ENOSPC', ErrorKinds.insufficientStorage],
    ['EDQUOT', ErrorKinds.insufficientStorage],
    ['EIO', ErrorKinds.storeUnavailable],
    ['EBADF', ErrorKinds.storeUnavailable],
  ] as const) {
    const mapped = toStoreError(systemError(code));
    assert.ok(isAppError(mapped), code);
    assert.equal(mapped.kind, kind, code);
  }
});

test('an error that is neither SQLite nor the system is left as it is', () => {
  const bug = new TypeError('not a function');
  assert.equal(toStoreError(bug), bug);
});
