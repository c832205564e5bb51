import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';

// Its own file (so its own process): embedded mode owns per-process engines.
describe('device authorization subscription in embedded mode', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(() => t?.stop());

  it('delivers a decision through the PGlite notification outbox', async () => {
    const tree = await seedTree(t.app);
    const grant = (await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'pglite', machine_id: 'm' } })).body;
    const client = createClient({ url: `${t.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const statuses: string[] = [];
    const events = client.iterate<{ deviceAuthorizationStatus: { status: string } }>({
      query: 'subscription($code: String) { deviceAuthorizationStatus(deviceCode: $code) { status } }',
      variables: { code: grant.device_code },
    });
    for await (const event of events) {
      statuses.push(event.data!.deviceAuthorizationStatus.status);
      if (statuses.length === 1) {
        await call(t.url, 'POST', '/rest/oauth2/device/approve/1.0', { token: tree.mspCaller.token, body: { device_code: grant.device_code, action: 'deny' } });
      }
    }
    expect(statuses).toEqual(['pending', 'denied']);
    await client.dispose();
  });
});
