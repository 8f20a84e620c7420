/**
 * A stopping server's keep-alive connections, on a real socket: a request
 * sent on a connection that was idle when the stop began is served, and its
 * answer closes the connection (Node's own close() would have closed it at
 * once, and the request would have met a reset); a connection that stays
 * idle is closed after the grace, so the stop ends.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { it } from 'node:test';
import Fastify from 'fastify';
import { IDLE_GRACE_MS, registerGracefulStop } from '../../src/http/graceful-stop.ts';

async function stoppableServer() {
  let stopping = false;
  const app = Fastify({ forceCloseConnections: 'idle', return503OnClosing: false });
  registerGracefulStop(app, () => stopping, 10_000);
  app.get('/x', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const stop = () => {
    stopping = true;
    return app.close();
  };
  return { port, stop };
}

/** Sends one keep-alive GET on `socket` and reads its whole answer (headers and body). */
async function exchange(socket: Socket): Promise<string> {
  socket.write('GET /x HTTP/1.1\r\nHost: test\r\n\r\n');
  let text = '';
  while (!/\r\n\r\n[\s\S]*\{"ok":true\}/.test(text)) {
    const [chunk] = (await Promise.race([
      once(socket, 'data'),
      once(socket, 'close').then(() => {
        throw new Error(`closed before an answer came: ${JSON.stringify(text)}`);
      }),
    ])) as [Buffer];
    text += chunk.toString();
  }
  return text;
}

it('a request on a connection idle when the stop began is served, and closes it', async () => {
  const { port, stop } = await stoppableServer();
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  assert.match(await exchange(socket), /^HTTP\/1\.1 200/);
  const stopped = stop();
  // The client's next request, a little after the stop began (as a busy client's may be).
  await new Promise((resolve) => setTimeout(resolve, IDLE_GRACE_MS / 5));
  const answer = await exchange(socket);
  assert.match(answer, /^HTTP\/1\.1 200/);
  assert.match(answer, /\r\nconnection: close\r\n/i);
  await once(socket, 'close');
  await stopped;
});

it('a connection that stays idle is closed after the grace, and the stop ends', async () => {
  const { port, stop } = await stoppableServer();
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  await exchange(socket);
  const began = performance.now();
  await Promise.all([stop(), once(socket, 'close')]);
  const took = performance.now() - began;
  assert.ok(took >= IDLE_GRACE_MS / 2, `closed after ${took} ms, before the grace`);
});
