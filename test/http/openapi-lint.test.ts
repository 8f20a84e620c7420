/** The generated OpenAPI document passes Spectral's OpenAPI ruleset with no errors. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { sqliteEngine } from '../support/engines.ts';
import { withApp } from './http-contract.ts';

const run = promisify(execFile);

interface SpectralResult {
  code: string;
  message: string;
  severity: number; // 0 error, 1 warning, 2 info, 3 hint
  path: string[];
}

it('spectral lint (spectral:oas) finds no errors in /api/openapi.json', async (t) => {
  const document = await withApp(sqliteEngine, async ({ inject }) => {
    const response = await inject({ url: '/api/openapi.json' });
    assert.equal(response.statusCode, 200);
    return response.body;
  });
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, document);
    // Exit code 1 means "found problems at or above --fail-severity"; read the report either way.
    const { stdout } = await run(
      join('node_modules', '.bin', 'spectral'),
      ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--fail-severity', 'error', file],
      { maxBuffer: 16 * 1024 * 1024 },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      if (error.stdout === undefined || error.stdout === '') throw error;
      return { stdout: error.stdout };
    });
    // The JSON report is followed by a human sentence when nothing failed.
    const report = stdout.slice(stdout.indexOf('['), stdout.lastIndexOf(']') + 1);
    const results = JSON.parse(report) as SpectralResult[];
    const errors = results.filter((r) => r.severity === 0);
    assert.deepEqual(
      errors.map((e) => `${e.code} at ${e.path.join('.')}: ${e.message}`),
      [],
    );
    // Warnings do not fail the build; they are shown so they get fixed.
    for (const w of results.filter((r) => r.severity === 1)) {
      t.diagnostic(`warning ${w.code} at ${w.path.join('.')}: ${w.message}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
