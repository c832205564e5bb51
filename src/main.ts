// Started by src/start.cjs (`npm start`), which sizes libuv's thread pool first.
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './app.js';
import { StartError } from './infra/start-error.js';

try {
  const config = loadConfig();
  const app = await buildApp(config);
  console.log(`listening on ${app.url}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info('server.stopping', { signal });
    await app.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (error) {
  // What the operator must change is said in the message; a stack trace only for bugs.
  console.error(error instanceof ConfigError || error instanceof StartError ? error.message : error);
  process.exit(1);
}
