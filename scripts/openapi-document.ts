/**
 * Prints the OpenAPI document the service serves at /api/openapi.json (an app
 * on an in-memory SQLite store answers it), or writes it to the file named by
 * the first argument. The client package generates its types from this.
 */
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';

export async function servedDocument(): Promise<string> {
  const app = await buildApp(defaultConfig({ databaseUrl: 'sqlite::memory:', logLevel: 'silent' }));
  try {
    const response = await app.http.inject({ url: '/api/openapi.json' });
    if (response.statusCode !== 200)
      throw new Error(`GET /api/openapi.json: ${response.statusCode}`);
    return `${JSON.stringify(response.json(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const document = await servedDocument();
  const file = process.argv[2];
  if (file === undefined) process.stdout.write(document);
  else writeFileSync(file, document);
}
