/**
 * Connections during a graceful stop. Once the stop begins, every answer
 * closes its connection (`Connection: close`), and connections that go idle
 * while the server waits are closed as they do: Node closes only the
 * connections that are idle when close() starts, so a keep-alive connection
 * that was busy then would hold the stop for its whole keep-alive timeout.
 * Requests that arrive on a still-open connection are served normally (their
 * client could not know), so no request that reached the service fails.
 */
import type { FastifyInstance } from 'fastify';

/** How often idle connections are closed while the server waits for the busy ones. */
const REAP_EVERY_MS = 50;

export function registerGracefulStop(app: FastifyInstance, isStopping: () => boolean): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (isStopping()) reply.header('connection', 'close');
    return payload;
  });
  let reaper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    let n = 0;
    reaper = setInterval(() => {
      app.server.closeIdleConnections();
      if (++n % 20 === 0) {
        const socks = (process as any)._getActiveHandles().filter((h: any) => h?.constructor?.name === 'Socket').map((h: any) => `${h.localPort}->${h.remotePort} destroyed=${h.destroyed} w=${h.writableLength} url=${h._httpMessage?.req?.url} id=${h._httpMessage?.req?.id} fin=${h._httpMessage?.writableFinished} hs=${h._httpMessage?.headersSent} parser=${!!h.parser} ended=${h.writableEnded}/${h.readableEnded}`);
        app.log.warn({ socks, streams: (app as any).eventStreams?.() }, 'DEBUGX sockets');
      }
    }, REAP_EVERY_MS);
    reaper.unref();
  });
  app.addHook('onClose', async () => clearInterval(reaper));
}
