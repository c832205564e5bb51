import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';

/** What the server writes back to `bytes` sent on a connection of their own, until it closes. */
function exchange(url: string, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body });
    });
  });
}

describe("Node's own refusals", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.stop());

  it('answer headers over the limit with 431 and the documented error body', async () => {
    const answer = await exchange(t.url, `GET /health HTTP/1.1\r\nhost: x\r\nx-pad: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.headers).toContain('content-type: application/json');
    expect(JSON.parse(answer.body)).toEqual({ error: 'headers_too_large', code: 'headers_too_large', message: expect.stringMatching(/16384 bytes/) });
  });

  it('answer a request line that is not HTTP with 400 and the documented error body', async () => {
    const answer = await exchange(t.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ error: 'bad_request', code: 'bad_request', message: expect.any(String) });
    expect((await call(t.url, 'GET', '/health')).status).toBe(200);
  });
});
