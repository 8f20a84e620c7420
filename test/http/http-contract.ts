/**
 * What the HTTP contract tests share: one describe per engine, an app on a
 * private database, and an `inject` that checks every response against the
 * app's own OpenAPI document before the test sees it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe } from 'node:test';
import type { AppOptions } from '../../src/app.ts';
import type { Config } from '../../src/config.ts';
import type { Message } from '../../src/domain/message.ts';
import type { ChangeLog } from '../../src/domain/change-log.ts';
import type { IdempotencyStore } from '../../src/domain/idempotency-store.ts';
import type { MessageStore } from '../../src/domain/message-store.ts';
import type { RoomStore } from '../../src/domain/room-store.ts';
import type { Store } from '../../src/domain/store.ts';
import { createStore } from '../../src/store/create-store.ts';
import { engines, skipUnlessEngine, type Engine, type TestDatabase } from '../support/engines.ts';
import {
  OpenApiConformance,
  checkedFetch,
  checkedInject,
  type CheckedInject,
} from '../support/openapi-conformance.ts';
import { silent } from '../support/open-store.ts';
import { startTestApp, testConfig, type TestApp } from '../support/test-app.ts';

export const UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Why each engine cannot run here (false: it can). In CI a missing engine fails instead. */
const skips = new Map<Engine, string | false>();
for (const engine of engines) skips.set(engine, await skipUnlessEngine(engine));

/** A running app with a checked inject and helpers. */
export interface ContractApp {
  readonly t: TestApp;
  readonly inject: CheckedInject;
  readonly conformance: OpenApiConformance;
  /** POST /api/messages, asserting 201; the created message. */
  create(body?: Record<string, unknown>): Promise<Message>;
  /** `fetch` on a real socket (listening on first use), checked against the document. */
  fetch(path: string, init?: RequestInit): Promise<{ response: Response; body: string }>;
  close(): Promise<void>;
}

export async function startContractApp(
  engine: Engine,
  overrides: Partial<Config> = {},
  options: AppOptions = {},
  db?: TestDatabase,
): Promise<ContractApp> {
  const t = await startTestApp(engine, overrides, options, db);
  const conformance = await OpenApiConformance.of(t.app.http);
  const inject = checkedInject(t.app.http, conformance);
  return {
    t,
    inject,
    conformance,
    async create(body = {}) {
      const response = await inject({
        method: 'POST',
        url: '/api/messages',
        payload: { author: 'ada', content: 'hello', ...body },
      });
      assert.equal(response.statusCode, 201, response.body);
      return response.json() as Message;
    },
    async fetch(path, init) {
      if (t.url === '') await t.listen();
      return checkedFetch(conformance, t.url, path, init);
    },
    close: () => t.close(),
  };
}

/** Runs `fn` on a fresh app with an empty private database, then closes it. */
export async function withApp<T>(
  engine: Engine,
  fn: (app: ContractApp) => Promise<T>,
  overrides: Partial<Config> = {},
  options: AppOptions = {},
): Promise<T> {
  const app = await startContractApp(engine, overrides, options);
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

/**
 * One describe per engine. `body` registers the tests; `shared()` is an app
 * started before them and closed after (tests that need an empty database use
 * `withApp`; tests that share this one work in rooms of their own).
 */
export function eachEngine(
  title: string,
  body: (engine: Engine, shared: () => ContractApp) => void,
  overrides: Partial<Config> = {},
): void {
  for (const engine of engines) {
    const skip = skips.get(engine) ?? false;
    describe(`${title} [${engine.name}]`, { skip }, () => {
      let app: ContractApp | undefined;
      before(async () => {
        app = await startContractApp(engine, overrides);
      });
      after(async () => app?.close());
      body(engine, () => {
        assert.ok(app, 'the shared app is running');
        return app;
      });
    });
  }
}

/** A room name no other test uses. */
export function uniqueRoom(): string {
  return `r-${randomBytes(6).toString('hex')}`;
}

/** Each problem entry names exactly one of pointer, parameter, header. */
export function assertProblem(
  response: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  type?: string,
): ProblemBody {
  assert.equal(response.statusCode, status, JSON.stringify(response.json()));
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const problem = response.json() as ProblemBody;
  assert.equal(problem.status, status);
  for (const field of ['type', 'title', 'detail', 'instance'] as const) {
    assert.equal(typeof problem[field], 'string', `problem.${field} is a string`);
    assert.notEqual(problem[field], '', `problem.${field} is not empty`);
  }
  if (type !== undefined) assert.equal(problem.type, `/problems/${type}`);
  for (const entry of problem.errors ?? []) {
    const located = ['pointer', 'parameter', 'header'].filter((k) => k in entry);
    assert.equal(located.length, 1, `exactly one location in ${JSON.stringify(entry)}`);
    assert.equal(typeof entry.detail, 'string');
  }
  return problem;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  errors?: { detail: string; pointer?: string; parameter?: string; header?: string }[];
}

/** The single validation entry, asserting there is exactly one. */
export function onlyError(problem: ProblemBody): NonNullable<ProblemBody['errors']>[number] {
  assert.equal(problem.errors?.length, 1, JSON.stringify(problem.errors));
  return problem.errors[0]!;
}

/** Replacements for some methods of a real store, by concern; `ping` is the store's own. */
export interface StoreOverrides {
  readonly messages?: Partial<MessageStore>;
  readonly changes?: Partial<ChangeLog>;
  readonly idempotency?: Partial<IdempotencyStore>;
  readonly rooms?: Partial<RoomStore>;
  readonly ping?: Store['ping'];
}

/**
 * `target` with some methods replaced: the rest run on the real object
 * (bound to it, so its private state works through the proxy).
 */
function withReplaced<T extends object>(target: T, replaced: object): T {
  return new Proxy(target, {
    get(real, property) {
      if (property in replaced) return (replaced as Record<PropertyKey, unknown>)[property];
      const value: unknown = Reflect.get(real, property, real);
      return typeof value === 'function' ? value.bind(real) : value;
    },
  });
}

/** A real store with some methods replaced; each concern is looked up when it is used. */
export function wrapStore(store: Store, overrides: (real: Store) => StoreOverrides): Store {
  const { messages = {}, changes = {}, idempotency = {}, rooms = {}, ...own } = overrides(store);
  const concerns = new Map<PropertyKey, object>([
    ['messages', messages],
    ['changes', changes],
    ['idempotency', idempotency],
    ['rooms', rooms],
  ]);
  return new Proxy(store, {
    get(real, property) {
      if (property in own) return (own as Record<PropertyKey, unknown>)[property];
      const value: unknown = Reflect.get(real, property, real);
      const replaced = concerns.get(property);
      if (replaced !== undefined) return withReplaced(value as object, replaced);
      return typeof value === 'function' ? value.bind(real) : value;
    },
  });
}

/** Runs `fn` on a fresh app whose store is the engine's real store, wrapped by `wrap`. */
export async function withWrappedStore<T>(
  engine: Engine,
  wrap: (real: Store) => StoreOverrides,
  fn: (app: ContractApp) => Promise<T>,
  overrides: Partial<Config> = {},
  options: AppOptions = {},
): Promise<T> {
  const db = await engine.createDatabase();
  const real = createStore(testConfig(db.url), silent);
  let app: ContractApp | undefined;
  try {
    app = await startContractApp(
      engine,
      overrides,
      { ...options, store: wrapStore(real, wrap) },
      db,
    );
    return await fn(app);
  } finally {
    if (app !== undefined) await app.close();
    else await real.close();
    await db.cleanup();
  }
}
