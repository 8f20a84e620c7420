/**
 * The chat page at `/`: static files from public/ (no build step). Each file
 * gets its own route (no wildcard), so every other path still reaches the
 * central not-found handler and stays a problem document.
 *
 * Two answers are not files: /page-settings.js, what the page must know of
 * this service before its first request (the change kinds of the event
 * stream, from the domain's one list, and whether authentication is on, so a
 * page with auth off makes no request that fails), and /favicon.ico, the
 * page's SVG icon for clients that ask for that name.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { CHANGE_KINDS } from '../domain/change.ts';

/** public/ beside src/ (and beside dist/ in a build: both sit one level below the root). */
export const PUBLIC_DIR = fileURLToPath(new URL('../../public/', import.meta.url));

export interface PageOptions {
  /** /api requests need a bearer token. */
  readonly authRequired: boolean;
  /** POST /auth/dev-token mints tokens (development only). */
  readonly devTokens: boolean;
}

/** The module the page imports: fixed for the life of the process. */
function pageSettingsModule(options: PageOptions): string {
  const auth = { required: options.authRequired, devTokens: options.devTokens };
  return [
    '// What this service tells its chat page (src/http/page-routes.ts).',
    `export const changeKinds = ${JSON.stringify(CHANGE_KINDS)};`,
    `export const auth = ${JSON.stringify(auth)};`,
    '',
  ].join('\n');
}

export async function registerPageRoutes(
  app: FastifyInstance,
  options: PageOptions,
): Promise<void> {
  await app.register(fastifyStatic, {
    root: PUBLIC_DIR,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    decorateReply: false,
    // The page is small and changes with each release: revalidate every time (ETag / Last-Modified).
    cacheControl: true,
    maxAge: 0,
    schemaHide: true,
  });

  const settings = pageSettingsModule(options);
  app.get('/page-settings.js', { schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(settings),
  );

  // Browsers and crawlers ask for /favicon.ico whatever the page's <link rel="icon"> says.
  const favicon = readFileSync(`${PUBLIC_DIR}favicon.svg`);
  app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(favicon),
  );
}
