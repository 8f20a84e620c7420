/** Process entry: load the settings, build the app, listen, and stop gracefully on SIGTERM/SIGINT. */
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';

function settingsOrExit(): Config {
  try {
    return loadConfig(process.env, process.argv.slice(2));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`message-service: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const config = settingsOrExit();
const app = await buildApp(config).catch((error: unknown) => {
  process.stderr.write(`message-service: cannot start: ${(error as Error).message}\n`);
  process.exit(1);
});

closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
  if (err !== undefined) app.http.log.error({ err }, 'stopping after an uncaught error');
  else app.http.log.info({ signal }, 'stopping');
  app.beginShutdown();
  await app.close();
  app.http.log.info('stopped');
});

await app.http.listen({ port: config.port, host: config.host });
