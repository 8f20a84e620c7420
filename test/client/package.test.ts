/**
 * The client package as it is published: its generated files are those of the
 * document the service serves now, it builds with tsc, and the build runs in
 * plain Node (no tsx) through the package's own `exports`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  GENERATED_DOCUMENT,
  GENERATED_TYPES,
  generatedFiles,
} from '../../scripts/generate-client.ts';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('../../packages/client/', import.meta.url));

it('the committed openapi.json and types are those of the served document (else: npm run generate -w @message-service/client)', async () => {
  const { document, types } = await generatedFiles();
  assert.equal(readFileSync(GENERATED_DOCUMENT, 'utf8'), document, 'packages/client/openapi.json');
  assert.equal(readFileSync(GENERATED_TYPES, 'utf8'), types, 'packages/client/src/openapi.ts');
  // openapi-typescript names every shape: a client says Message, not an inline copy.
  for (const name of ['Message', 'Problem', 'Room', 'Membership', 'ReadMarker', 'StreamEvent']) {
    assert.match(types, new RegExp(`^ {8}${name}: `, 'm'), `components.schemas.${name}`);
  }
});

it('the package is publishable: it builds with tsc and its build loads in plain Node', async () => {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
    name: string;
    license: string;
    types: string;
    files: string[];
    exports: Record<string, { types: string; import: string }>;
  };
  assert.equal(manifest.license, 'MIT');
  assert.deepEqual(manifest.exports['.'], {
    types: './dist/index.d.ts',
    import: './dist/index.js',
  });
  assert.ok(manifest.files.includes('dist') && manifest.files.includes('src'));

  // Inside the package, so that its imports resolve as they would once installed.
  const out = mkdtempSync(join(PACKAGE_DIR, '.build-test-'));
  try {
    const tsc = join('node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '-p', join(PACKAGE_DIR, 'tsconfig.json'), '--outDir', out]);
    assert.ok(readFileSync(join(out, 'index.d.ts'), 'utf8').includes('MessageServiceClient'));
    // Plain node, no loader: the emitted imports must resolve as published (./x.js, openapi-fetch).
    const script = `
      const { createClient, nextLink } = await import(${JSON.stringify(join(out, 'index.js'))});
      const client = createClient({ baseUrl: 'http://127.0.0.1:1' });
      const link = nextLink(new Response(null, { headers: { link: '</p?after=2>; rel="next"' } }));
      console.log(typeof client.api.GET, typeof client.pages, link);
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: PACKAGE_DIR,
    });
    assert.equal(stdout.trim(), 'function function /p?after=2');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
