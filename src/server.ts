/**
 * Process entry: read `.env` if there is one, load the settings, build the
 * app, listen, and stop gracefully on SIGTERM/SIGINT.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import closeWithGrace from 'close-with-grace';
import { ConfigError, describeStore, loadConfig, type Config } from './config.ts';
import { VERSION } from './version.ts';

function fail(message: string): never {
  process.stderr.write(`message-service: ${message}\n`);
  process.exit(1);
}

/**
 * `.env` in the working directory, read by Node's own loader into the
 * environment. A variable already set in the environment wins over the file,
 * and a flag over both. Returns whether there was one.
 */
function readEnvFile(): boolean {
  try {
    process.loadEnvFile('.env');
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    fail(`cannot read .env: ${(error as Error).message}`);
  }
}

function settingsOrExit(): Config {
  try {
    return loadConfig(process.env, process.argv.slice(2));
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

const envFile = readEnvFile();
const config = settingsOrExit();
// Loaded only once the settings are good, so a bad one is refused at once.
const { buildApp } = await import('./app.ts');
const app = await buildApp(config).catch((error: unknown) =>
  fail(`cannot start: ${(error as Error).message}`),
);

let stopSignal: NodeJS.Signals | undefined;
const closer = closeWithGrace(
  // SIGINT and SIGTERM are handled below; closeWithGrace keeps the rest (uncaught errors, other signals).
  { delay: config.shutdownTimeoutMs, skip: ['SIGINT', 'SIGTERM'] },
  async ({ signal, err }) => {
    if (err !== undefined) app.http.log.error({ err }, 'stopping after an uncaught error');
    else app.http.log.info({ signal: signal ?? stopSignal }, 'stopping');
    app.beginShutdown();
    // /readyz answers 503 for a while before the listener closes, so balancers stop sending first.
    if (config.shutdownDrainMs > 0) await sleep(config.shutdownDrainMs);
    await app.close();
    app.http.log.info('stopped');
  },
);

// One graceful stop per SIGTERM/SIGINT. Under `npm start` the same stop can arrive twice at
// once (a terminal's Ctrl-C reaches the whole process group, and npm forwards what it gets),
// so a repeat within a second is the same request; a later one forces the exit.
let firstStopAt = 0;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (firstStopAt === 0) {
      firstStopAt = Date.now();
      stopSignal = signal;
      void closer.close();
    } else if (Date.now() - firstStopAt > 1000) {
      app.http.log.error({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
  });
}

let address: string;
try {
  address = await app.http.listen({ port: config.port, host: config.host });
} catch (error) {
  process.stderr.write(`message-service: cannot listen: ${(error as Error).message}\n`);
  await app.close().catch(() => undefined);
  process.exit(1);
}
// The line that says what runs where (Fastify's own "Server listening at" comes just before).
const store = describeStore(config.databaseUrl);
const running = { version: VERSION, store: store.engine, storeLocation: store.location, address };
app.http.log.info(
  { ...running, envFile },
  `message-service ${running.version} listening at ${address}, store: ${store.engine} ${store.location}${envFile ? ' (settings from .env too)' : ''}`,
);
