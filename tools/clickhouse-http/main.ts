/**
 * Runs the chDB-backed ClickHouse HTTP endpoint on loopback:
 *   npx tsx tools/clickhouse-http/main.ts --data ./data/chdb-http --port 8123 \
 *     [--user U --password P] [--tls-cert cert.pem --tls-key key.pem]
 * Prints the URL, serves until SIGINT/SIGTERM.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startClickHouseHttpServer } from './server.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: './data/chdb-http' },
    port: { type: 'string', default: '8123' },
    host: { type: 'string', default: '127.0.0.1' },
    user: { type: 'string' },
    password: { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
  },
});

mkdirSync(values.data!, { recursive: true });
const server = await startClickHouseHttpServer({
  dataDir: values.data!,
  port: Number(values.port),
  host: values.host!,
  ...(values.user !== undefined ? { user: values.user } : {}),
  ...(values.password !== undefined ? { password: values.password } : {}),
  ...(values['tls-cert'] && values['tls-key'] ? { tls: { cert: readFileSync(values['tls-cert']), key: readFileSync(values['tls-key']) } } : {}),
});
console.log(`clickhouse-http (chDB) listening on ${server.url}`);
const stop = () => {
  void server.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
