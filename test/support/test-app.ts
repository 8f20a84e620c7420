/** Builds the real app on a private database, for app.inject tests or a real socket on port 0. */
import type { AddressInfo } from 'node:net';
import { buildApp, type App, type AppOptions } from '../../src/app.ts';
import { defaultConfig, type Config } from '../../src/config.ts';
import type { Engine, TestDatabase } from './engines.ts';

export interface TestApp {
  readonly app: App;
  readonly db: TestDatabase;
  readonly config: Config;
  /** Base URL once `listen()` was called. */
  url: string;
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Settings for tests: quiet logs, rate limits off, unless a test says otherwise. */
export function testConfig(databaseUrl: string, overrides: Partial<Config> = {}): Config {
  return defaultConfig({
    databaseUrl,
    logLevel: 'silent',
    rateLimitRead: null,
    rateLimitWrite: null,
    port: 0,
    ...overrides,
  });
}

export async function startTestApp(
  engine: Engine,
  overrides: Partial<Config> = {},
  options: AppOptions = {},
  db?: TestDatabase,
): Promise<TestApp> {
  const database = db ?? (await engine.createDatabase());
  const config = testConfig(database.url, overrides);
  const app = await buildApp(config, options);
  const testApp: TestApp = {
    app,
    db: database,
    config,
    url: '',
    async listen() {
      await app.http.listen({ port: 0, host: '127.0.0.1' });
      const address = app.http.server.address() as AddressInfo;
      testApp.url = `http://127.0.0.1:${address.port}`;
      return testApp.url;
    },
    async close() {
      await app.close();
      if (db === undefined) await database.cleanup();
    },
  };
  return testApp;
}
