#!/usr/bin/env node
// Runs every test file with Node's test runner (TypeScript through tsx).
// Files under test/faults/ stop and kill things, so they run one at a time
// after the rest; everything else runs in parallel, one process per file.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out = out.concat(find(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out.sort();
}

const only = process.argv.slice(2);
const all = find('test').filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
const faults = all.filter((f) => f.startsWith(join('test', 'faults')));
const rest = all.filter((f) => !faults.includes(f));

function run(files, concurrency) {
  if (files.length === 0) return 0;
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${concurrency}`,
      '--test-reporter=spec',
      ...files,
    ],
    { stdio: 'inherit' },
  );
  return result.status ?? 1;
}

const status = Math.max(run(rest, 2), run(faults, 1));
process.exit(status);
