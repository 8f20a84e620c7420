#!/usr/bin/env node
// Runs every test file with Node's test runner (TypeScript through tsx).
// Files under test/faults/ stop and kill things, so they run one at a time
// after the rest; everything else runs in parallel, one process per file,
// TEST_CONCURRENCY at once (default 4: most test time is spent waiting on
// sockets, fsync and timers, not on the CPU, so twice the cores keeps them busy).
import { spawn } from 'node:child_process';
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

const totals = { pass: 0, fail: 0, skipped: 0 };

/** Runs one group; its output goes through as it comes, and its summary counts are added up. */
function run(files, concurrency) {
  if (files.length === 0) return Promise.resolve(0);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        `--test-concurrency=${concurrency}`,
        '--test-reporter=spec',
        ...files,
      ],
      { stdio: ['inherit', 'pipe', 'inherit'] },
    );
    let text = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      text += chunk;
    });
    child.on('close', (code) => {
      for (const key of Object.keys(totals)) {
        const match = new RegExp(`^ℹ ${key} (\\d+)$`, 'm').exec(text);
        totals[key] += match ? Number(match[1]) : 0;
      }
      resolve(code ?? 1);
    });
  });
}

const concurrency = Number(process.env.TEST_CONCURRENCY ?? 4);
const status = Math.max(await run(rest, concurrency), await run(faults, 1));
// One closing line for the whole run (both groups).
console.log(`\ntests: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped`);
process.exit(status);
