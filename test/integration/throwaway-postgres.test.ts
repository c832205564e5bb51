import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startThrowawayPostgres, testPostgres } from '../kit/throwaway-postgres.js';

async function query(url: string, sql: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0];
  } finally {
    await client.end();
  }
}

describe("the tests' own PostgreSQL", () => {
  it('is a new cluster in a temporary directory on a loopback port, removed by stop', async () => {
    const server = await startThrowawayPostgres();
    let dataDirectory = '';
    try {
      const url = new URL(server.url);
      const row = await query(
        server.url,
        `SELECT current_setting('data_directory') AS data, current_setting('port') AS port, current_setting('listen_addresses') AS listen,
                current_setting('unix_socket_directories') AS sockets, current_setting('fsync') AS fsync, pg_encoding_to_char(encoding) AS encoding
         FROM pg_database WHERE datname = current_database()`,
      );
      dataDirectory = row.data;
      expect(url.hostname).toBe('127.0.0.1');
      expect(row).toMatchObject({ port: url.port, listen: '127.0.0.1', sockets: '', fsync: 'off', encoding: 'UTF8' });
      expect(dataDirectory.startsWith(`${tmpdir()}/bd-test-pg-`)).toBe(true);
      const wrongPassword = new URL(server.url);
      wrongPassword.password = 'postgres';
      await expect(query(wrongPassword.toString(), 'SELECT 1')).rejects.toThrow(/password authentication failed/);
    } finally {
      server.stop();
    }
    expect(existsSync(dataDirectory)).toBe(false);
    await expect(query(server.url, 'SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
    expect(() => server.stop()).not.toThrow();
  });

  it('is not started when TEST_DATABASE_URL names a server', async () => {
    const given = process.env.TEST_DATABASE_URL;
    expect(given).toBeTruthy();
    const server = await testPostgres();
    expect(server.url).toBe(given);
    server.stop();
    expect((await query(given as string, 'SELECT 1 AS one')).one).toBe(1);
  });
});
