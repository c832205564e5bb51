import { ConfigError, loadConfig } from '../config.js';
import { DomainError } from '../errors.js';
import { openDatabase } from '../infra/database.js';
import { createLogger } from '../infra/logger.js';
import { findCommand, usage } from './commands.js';

/**
 * The operator's tool. It works on the same data as the server: DATABASE_URL, or the embedded
 * database, reached through the running server's socket when one runs (PGlite admits one
 * process per directory), else opened directly. Prints JSON on stdout.
 */
async function main(argv: string[]): Promise<number> {
  const command = findCommand(argv);
  if (!command) {
    console.error(usage);
    return 2;
  }
  const config = loadConfig();
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    logger: createLogger('warn'),
    role: 'client',
  });
  try {
    const result = await command.run(command.args, db, config);
    console.log(JSON.stringify(result, null, 2));
    return 0;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof DomainError) console.error(JSON.stringify({ error: error.code, message: error.message }));
    else if (error instanceof ConfigError) console.error(error.message);
    else console.error(error);
    process.exit(error instanceof DomainError && error.code === 'usage' ? 2 : 1);
  },
);
