/** MAX_CONNECTIONS stays below the open-file limit, with descriptors kept for the rest. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectionCap, openFileLimit } from '../../src/http/connection-cap.ts';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            %SOFT%               1048576              files
Max locked memory         8388608              8388608              bytes
`;

describe('connection cap', () => {
  it('lowers a cap at or above the open-file limit to the limit less the reserve', () => {
    assert.deepEqual(connectionCap(20_000, 20_000, 138), { cap: 19_862, clamped: true });
    assert.deepEqual(connectionCap(30_000, 20_000, 138), { cap: 19_862, clamped: true });
    assert.deepEqual(connectionCap(19_863, 20_000, 138), { cap: 19_862, clamped: true });
  });

  it('keeps a cap that fits, and any cap when the limit is unknown', () => {
    assert.deepEqual(connectionCap(19_862, 20_000, 138), { cap: 19_862, clamped: false });
    assert.deepEqual(connectionCap(100, 1024, 138), { cap: 100, clamped: false });
    assert.deepEqual(connectionCap(20_000, null, 138), { cap: 20_000, clamped: false });
  });

  it('never goes below one connection', () => {
    assert.deepEqual(connectionCap(20_000, 100, 138), { cap: 1, clamped: true });
  });

  it('reads the soft open-file limit from a limits file; null when unlimited or unreadable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'limits-'));
    try {
      const file = join(dir, 'limits');
      writeFileSync(file, LIMITS.replace('%SOFT%', '1024'));
      assert.equal(openFileLimit(file), 1024, 'the soft limit, not the hard one');
      writeFileSync(file, LIMITS.replace('%SOFT%', 'unlimited'));
      assert.equal(openFileLimit(file), null);
      writeFileSync(file, 'nothing of the kind\n');
      assert.equal(openFileLimit(file), null);
      assert.equal(openFileLimit(join(dir, 'missing')), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    "reads this process's own limit on Linux (what ulimit -n says)",
    { skip: process.platform !== 'linux' },
    () => {
      const shell = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
      assert.equal(openFileLimit(), Number.isSafeInteger(shell) ? shell : null);
    },
  );
});
