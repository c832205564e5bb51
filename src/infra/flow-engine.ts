import { join } from 'node:path';
import type { Config } from '../config.js';
import { ChdbThreadEngine, type FlowEngine, HttpEngine, migrateFlowStore } from '../flowstore/index.js';
import type { Logger } from './logger.js';

/**
 * ClickHouse as configured: a server over HTTP when CLICKHOUSE_URL is set, else chDB (the real
 * engine, in-process, on a thread of its own: flowstore/chdb-thread.ts) under DATA_DIR/clickhouse.
 * Either way the flow store schema is migrated before the server takes requests.
 */
export async function openFlowEngine(config: Config, logger: Logger): Promise<FlowEngine> {
  const server = config.clickhouse;
  const engine = server
    ? new HttpEngine({
        url: server.url,
        database: server.database,
        username: server.user,
        password: server.password?.reveal(),
        caCert: server.caCert,
        clientCert: server.clientCert && { cert: server.clientCert.cert, key: Buffer.from(server.clientCert.key.reveal()) },
      })
    : await ChdbThreadEngine.open(join(config.dataDir, 'clickhouse'));
  try {
    await prepareFlowEngine(engine, config, logger);
  } catch (error) {
    // The start fails: let go of the connections (or the thread) with it.
    await engine.close();
    throw error;
  }
  return engine;
}

export async function prepareFlowEngine(engine: FlowEngine, config: Config, logger: Logger): Promise<void> {
  const report = await migrateFlowStore(engine, { retentionDays: config.flowRetentionDays });
  logger.info('clickhouse.ready', { engine: engine.kind, ...report });
}
