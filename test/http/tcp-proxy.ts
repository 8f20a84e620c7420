/**
 * A TCP proxy on 127.0.0.1 in front of the shared PostgreSQL, so a test can
 * make the store really unreachable (and reachable again) without touching
 * the server everyone else uses: `stop()` drops every connection and closes
 * the port, `start()` opens the same port again.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly #targetHost: string;
  readonly #targetPort: number;
  #server: Server | undefined;
  #port = 0;
  readonly #sockets = new Set<Socket>();

  constructor(targetHost: string, targetPort: number) {
    this.#targetHost = targetHost;
    this.#targetPort = targetPort;
  }

  get port(): number {
    return this.#port;
  }

  /** Listens (on the port it had before, if any). */
  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection({ host: this.#targetHost, port: this.#targetPort });
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: this.#port }, () => resolve());
    });
    this.#port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Stops listening and cuts every open connection: the store is gone. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
