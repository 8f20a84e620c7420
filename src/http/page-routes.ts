/**
 * The chat page at `/`: static files from public/ (no build step). Each file
 * gets its own route (no wildcard), so every other path still reaches the
 * central not-found handler and stays a problem document.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

/** public/ beside src/ (and beside dist/ in a build: both sit one level below the root). */
export const PUBLIC_DIR = fileURLToPath(new URL('../../public/', import.meta.url));

export async function registerPageRoutes(app: FastifyInstance): Promise<void> {
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
}
