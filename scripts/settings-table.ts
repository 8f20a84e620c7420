// Prints the README's settings table from src/config.ts, the single source of the settings.
import { settings } from '../src/config.ts';

const flag = (env: string) => `--${env.toLowerCase().replace(/_/g, '-')}`;
console.log('| variable | flag | default | meaning |');
console.log('|---|---|---|---|');
for (const s of settings) {
  const value = s.defaultValue === '' ? 'unset' : `\`${s.defaultValue}\``;
  console.log(`| \`${s.env}\` | \`${flag(s.env)}\` | ${value} | ${s.description} |`);
}
