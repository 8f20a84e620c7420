/**
 * The browser tests' common ground: Debian's Chromium, headless, driven by
 * playwright-core (no browser download here); a page that records what went
 * wrong in it; a suite's app and browser, and the app's restart; joining a room through the header form; a message by its text;
 * an app with auth on and development tokens for the signed-in pages.
 */
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { AppOptions } from '../../src/app.ts';
import { AUTH } from '../auth/tokens.ts';
import { sqliteEngine, type TestDatabase } from './engines.ts';
import { CHROMIUM } from './prerequisites.ts';
import { startTestApp, type TestApp } from './test-app.ts';

/** How long a page may take to show what a test waits for. */
export const WAIT = { timeout: 15_000 };

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // No background networking: this machine has no network beyond loopback.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** A browser suite's app (auth off, on a SQLite file of its own) and its Chromium. */
export interface PageSuite {
  /** The app now serving (a restart replaces it). */
  readonly t: TestApp;
  readonly browser: Browser;
  /** Closes the app, as a server that goes away; its address is kept for `restart`. */
  stop(): Promise<void>;
  /** A new app on the same file and address; `meanwhile` runs before it listens. */
  restart(meanwhile?: (t: TestApp) => Promise<void>): Promise<void>;
}

/**
 * Starts the app and Chromium before the suite's tests (nothing when `skip`)
 * and closes both, and the file, after them. Screenshots go to test-output/.
 */
export function pageSuite(skip: unknown, options: AppOptions = {}): PageSuite {
  let db: TestDatabase | undefined;
  let t: TestApp | undefined;
  let browser: Browser | undefined;
  let port = 0;
  const start = () => startTestApp(sqliteEngine, { eventsHeartbeatMs: 1000 }, options, db);
  before(async () => {
    if (skip) return;
    db = await sqliteEngine.createDatabase();
    t = await start();
    await t.listen();
    browser = await launchChromium();
    mkdirSync('test-output', { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await db?.cleanup();
  });
  return {
    get t() {
      return t!;
    },
    get browser() {
      return browser!;
    },
    async stop() {
      port = (t!.app.http.server.address() as AddressInfo).port;
      await t!.app.close();
    },
    async restart(meanwhile) {
      t = await start();
      await meanwhile?.(t);
      await t.app.http.listen({ port, host: '127.0.0.1' });
      t.url = `http://127.0.0.1:${port}`;
    },
  };
}

/** A page, and what went wrong in it: console errors, failed requests, answers of 400 or more. */
export interface Watched {
  page: Page;
  problems: string[];
  /** Every request's method and URL (path and query). */
  requests: string[];
}

export interface WatchOptions {
  /** The page's clock, fixed at this time (ms since the epoch). */
  readonly fixedTime?: number;
  /** Record each query percent-decoded (so emoji and ids read as written). */
  readonly decodeQuery?: boolean;
}

/** A new page in its own context (en-US, UTC, 1100×800) at `url`, watched. */
export async function watchedPage(
  browser: Browser,
  url: string,
  options: WatchOptions = {},
): Promise<Watched> {
  const context = await browser.newContext({
    locale: 'en-US',
    timezoneId: 'UTC',
    viewport: { width: 1100, height: 800 },
  });
  const page = await context.newPage();
  if (options.fixedTime !== undefined) await page.clock.setFixedTime(options.fixedTime);
  const watched: Watched = { page, problems: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') watched.problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (error) => watched.problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (r) => {
    // An event stream the page itself closes (another room, a new sign-in) is not a failure.
    if (!r.url().includes('/api/events')) watched.problems.push(`failed: ${r.url()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) watched.problems.push(`${r.status()}: ${r.url()}`);
  });
  page.on('request', (r) => {
    const { pathname, search } = new URL(r.url());
    const query = options.decodeQuery === true ? decodeURIComponent(search) : search;
    watched.requests.push(`${r.method()} ${pathname}${query}`);
  });
  await page.goto(url);
  return watched;
}

/** Joins a room through the header form (signing in as `name` first when given), until live. */
export async function joinRoom(page: Page, room: string, name?: string): Promise<void> {
  if (name !== undefined) await page.getByLabel('Your name', { exact: true }).fill(name);
  await page.getByLabel('Room', { exact: true }).fill(room);
  await page.getByRole('button', { name: 'Join' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `Live in ${room}` })
    .waitFor(WAIT);
}

/** The list item whose content is exactly `text`. */
export const messageItem = (page: Page, text: string) =>
  page
    .locator('#messages li.message')
    .filter({ has: page.locator('.content').getByText(text, { exact: true }) });

/** An app on SQLite with auth on and development tokens (the page signs in by name), listening. */
export async function startSignedInApp(): Promise<TestApp> {
  const t = await startTestApp(sqliteEngine, {
    ...AUTH,
    authDevTokens: true,
    eventsHeartbeatMs: 1000,
  });
  await t.listen();
  return t;
}
