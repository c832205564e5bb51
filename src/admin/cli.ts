import { ConfigError, loadConfig } from '../config.js';
import { DomainError } from '../errors.js';
import { openDatabase } from '../infra/database.js';
import { createLogger } from '../infra/logger.js';
import { findCommand, usage } from './commands.js';
import { usageError } from './usage.js';

const HELP = new Set(['help', '--help', '-h']);

/**
 * The operator's tool. It works on the same data as the server: DATABASE_URL, or the embedded
 * database, reached through the running server's socket when one runs (PGlite admits one
 * process per directory), else opened directly. Prints JSON on stdout; help goes to stdout as
 * text, and mistakes in the command line to stderr as text with the usage (exit 2).
 */
async function main(argv: string[]): Promise<number> {
  if (argv.length > 0 && HELP.has(argv[0]!)) {
    const asked = findCommand(argv.slice(1));
    console.log(asked ? `usage:\n${asked.usage}` : usage);
    return 0;
  }
  const command = findCommand(argv);
  if (!command) {
    console.error(`unknown command: ${argv.slice(0, 2).join(' ')}\n${usage}`);
    return 2;
  }
  if (command.args.some((a) => HELP.has(a) && a !== 'help')) {
    console.log(`usage:\n${command.usage}`);
    return 0;
  }
  const config = loadConfig();
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    logger: createLogger('warn'),
    role: 'client',
  });
  try {
    const result = await command.run(command.args, db, config).catch((error: unknown) => {
      // node:util parseArgs refuses unknown options and missing values with these codes.
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) throw usageError((error as Error).message, command.usage);
      throw error;
    });
    console.log(JSON.stringify(result, null, 2));
    return 0;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    const usageMistake = error instanceof DomainError && error.code === 'usage';
    if (usageMistake || error instanceof ConfigError) console.error(error.message);
    else if (error instanceof DomainError) console.error(JSON.stringify({ error: error.code, message: error.message }));
    else console.error(error);
    process.exit(usageMistake ? 2 : 1);
  },
);
