/**
 * docs/ is written by hand, and checked here against the OpenAPI document the
 * service serves: every operation has its section in docs/api.md (and no
 * section names one that is gone), every problem type its row in
 * docs/errors.md with its status, every event type its row in docs/events.md
 * with the schema of its data, every named schema and header its mention.
 * And the guide stands alone: its links resolve inside the repository.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sqliteEngine } from '../support/engines.ts';
import { withApp } from '../http/http-contract.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface Document {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        'x-events'?: Events;
        parameters?: { name: string; in: string }[];
      }
    >
  >;
  components: {
    schemas: Record<string, { properties?: { type?: { enum?: string[] } } }>;
    headers: Record<string, unknown>;
  };
}
type Events = Record<string, { data: { $ref: string } }>;

let document: Document;
before(async () => {
  document = await withApp(sqliteEngine, async ({ inject }) => {
    const response = await inject({ url: '/api/openapi.json' });
    return response.json() as Document;
  });
});

/** The table rows of a markdown text whose first cell is a code span: first cell -> other cells. */
function tableRows(text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const key = /^`([^`]+)`$/.exec(cells[1] ?? '');
    if (line.startsWith('|') && key !== null) rows.set(key[1]!, cells.slice(2, -1));
  }
  return rows;
}

describe('docs/ against the served OpenAPI document', () => {
  it('docs/api.md has a section for every operation, and for nothing else', () => {
    const api = read('docs/api.md');
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({
        heading: `${method.toUpperCase()} ${path}`,
        id: op.operationId,
      })),
    );
    const headings = [...api.matchAll(/^### `([A-Z]+ \/[^`]*)`$/gm)].map((m) => m[1]!);
    assert.deepEqual(
      [...headings].sort(),
      operations.map((o) => o.heading).sort(),
      'the ### `METHOD /path` headings of docs/api.md',
    );
    for (const { heading, id } of operations) {
      const section = api.slice(api.indexOf(`### \`${heading}\``)).split('\n### ')[0]!;
      assert.ok(section.includes(`\`${id}\``), `${heading} names its operationId ${id}`);
    }
  });

  it('docs/api.md names every query parameter of an operation in its section', () => {
    const api = read('docs/api.md');
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const heading = `${method.toUpperCase()} ${path}`;
        const section = api.slice(api.indexOf(`### \`${heading}\``)).split('\n### ')[0]!;
        for (const parameter of op.parameters ?? []) {
          if (parameter.in !== 'query') continue;
          assert.ok(
            section.includes(`\`${parameter.name}\``),
            `${heading} names ${parameter.name}`,
          );
        }
      }
    }
  });

  it('docs/errors.md has a row for every problem type, with its status', () => {
    const types = document.components.schemas.Problem?.properties?.type?.enum ?? [];
    assert.ok(types.length > 10, 'the Problem schema lists its types');
    const rows = tableRows(read('docs/errors.md'));
    const documented = [...rows.keys()].filter((k) => k.startsWith('/problems/'));
    assert.deepEqual(documented.sort(), [...types].sort());
    const description = String(
      (document as unknown as { info: { description: string } }).info.description,
    );
    for (const type of types) {
      const status = new RegExp(`\\| \`${type}\` \\| (\\d{3}) \\|`).exec(description)?.[1];
      assert.equal(rows.get(type)?.[0], status, `the status of ${type}`);
    }
  });

  it('docs/events.md has a row for every event type, with the schema of its data', () => {
    const events = document.paths['/api/events']?.get?.['x-events'];
    assert.ok(events, 'GET /api/events has x-events');
    const rows = tableRows(read('docs/events.md'));
    const documented = new Map(
      [...rows].filter(([key]) => key in events || /^[a-z-]+(\.[a-z-]+)?$/.test(key)),
    );
    assert.deepEqual([...documented.keys()].sort(), Object.keys(events).sort());
    for (const [event, { data }] of Object.entries(events)) {
      const schema = data.$ref.replace('#/components/schemas/', '');
      assert.equal(documented.get(event)?.[0], `\`${schema}\``, `the data of ${event}`);
    }
  });

  it('docs/api.md names every schema and every common header of the document', () => {
    const rows = tableRows(read('docs/api.md'));
    const schemas = Object.keys(document.components.schemas);
    assert.deepEqual(
      [...rows.keys()].filter((k) => /^[A-Z][A-Za-z]+$/.test(k)).sort(),
      [...schemas].sort(),
      'the Named shapes table',
    );
    const api = read('docs/api.md');
    for (const name of Object.keys(document.components.headers)) {
      assert.ok(api.includes(`\`${name}\``), `docs/api.md mentions the header ${name}`);
    }
  });
});

describe('the guide stands alone', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'packages/client/README.md',
  ];

  it('every relative link in README.md and docs/ resolves to a file of the repository', () => {
    for (const page of pages) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
        const file = resolve(ROOT, dirname(page), target!.split('#')[0]!);
        assert.ok(!relative(ROOT, file).startsWith('..'), `${page}: ${target} is outside`);
        assert.ok(existsSync(file), `${page}: ${target} exists`);
      }
    }
  });

  it('docs/ links to no web page, and nothing cites a file outside the repository', () => {
    for (const page of pages.filter((p) => p.startsWith('docs/'))) {
      assert.doesNotMatch(read(page), /\]\(https?:/, `${page} links only inside the repository`);
    }
    const outside = ['..', 'shared', ''].join('/');
    for (const page of pages) {
      assert.ok(!read(page).includes(outside), `${page} cites ${outside}`);
    }
  });

  it('the README links the guide', () => {
    assert.match(read('README.md'), /\]\(docs\/README\.md\)/);
  });
});
