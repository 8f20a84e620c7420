/**
 * Connections during a graceful stop. Once the stop begins, every answer
 * closes its connection (`Connection: close`), and every connection with no
 * request in progress is closed as soon as it has none. Node's own close()
 * closes only the connections idle at that moment: one busy then, or one
 * opened but not yet used (Node counts that as a request being received),
 * would hold the stop until a timeout far longer than the stop may take.
 * A request that arrives on a connection still open is served normally (its
 * client could not know), so no request that reached the service fails.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How often connections with nothing in progress are closed while the server waits. */
const REAP_EVERY_MS = 50;

export function registerGracefulStop(app: FastifyInstance, isStopping: () => boolean): void {
  // Every open connection, with how many requests on it are in progress.
  const inProgress = new Map<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    inProgress.set(socket, 0);
    socket.once('close', () => inProgress.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    if (!inProgress.has(socket)) return;
    inProgress.set(socket, inProgress.get(socket)! + 1);
    response.once('close', () => {
      const count = inProgress.get(socket);
      if (count !== undefined) inProgress.set(socket, count - 1);
    });
  });

  // A callback hook: an async one costs a promise and a microtask turn on every request.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (isStopping()) reply.header('connection', 'close');
    done(null, payload);
  });
  let reaper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    reaper = setInterval(() => {
      for (const [socket, count] of inProgress) if (count === 0) socket.destroy();
    }, REAP_EVERY_MS);
    reaper.unref();
  });
  app.addHook('onClose', async () => clearInterval(reaper));
}
