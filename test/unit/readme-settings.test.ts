import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { settings } from '../../src/config.ts';

test("the README's settings table lists every setting with its default", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const table = /<!-- settings:start[^>]*-->\n([\s\S]*?)<!-- settings:end -->/.exec(readme)?.[1];
  assert.ok(table, 'README has the settings table markers');
  const rows = table.split('\n').map((line) => line.split('|').map((cell) => cell.trim()));
  for (const s of settings) {
    const row = rows.find((cells) => cells[1] === `\`${s.env}\``);
    assert.ok(row, `${s.env} is in the README's table`);
    const shown = s.defaultValue === '' ? 'unset' : `\`${s.defaultValue}\``;
    assert.equal(row[3], shown, `${s.env}'s default in the README`);
  }
});
