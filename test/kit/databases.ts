import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DEFAULT_TEST_DATABASE_URL } from './global-setup.js';

const adminUrl = () => process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;

/** A new empty database on the test server, dropped by the returned function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
