import WebSocket from 'ws';
import { call } from './http.js';

export interface CommandMessage {
  type: 'command';
  id: string;
  name: string;
  args: Record<string, unknown>;
  deadline_ms: number;
}

type Answer = (command: CommandMessage) => { ok: boolean; data?: Record<string, unknown>; error?: { code: string; message: string } } | undefined;

/**
 * The smallest collector that speaks docs/collector-protocol.md, for server-side tests: it sends
 * `hello`, records what it is sent, and answers commands with whatever the test says (or not at all).
 */
export class FakeCollector {
  readonly received: Array<Record<string, any>> = [];
  welcome!: Record<string, any>;
  closed: { code: number; reason: string } | undefined;
  answer: Answer = () => undefined;
  private ws!: WebSocket;

  static async exchange(baseUrl: string, accessKey: string): Promise<string> {
    const dot = accessKey.indexOf('.');
    const res = await call(baseUrl, 'POST', '/rest/oauth2/token/1.0', {
      body: { client_id: accessKey.slice(0, dot), client_secret: accessKey.slice(dot + 1) },
    });
    return res.body.access_token;
  }

  static async connect(baseUrl: string, token: string, hello: Record<string, unknown>): Promise<FakeCollector> {
    const collector = new FakeCollector();
    await collector.open(baseUrl, token, hello);
    return collector;
  }

  private open(baseUrl: string, token: string, hello: Record<string, unknown>): Promise<void> {
    this.ws = new WebSocket(baseUrl.replace(/^http/, 'ws') + '/collector/control/1.0', { headers: { authorization: `Bearer ${token}` } });
    return new Promise((resolve, reject) => {
      this.ws.on('open', () => this.ws.send(JSON.stringify({ type: 'hello', ...hello })));
      this.ws.on('message', (raw) => {
        const message = JSON.parse(raw.toString());
        this.received.push(message);
        if (message.type === 'welcome') {
          this.welcome = message;
          resolve();
        }
        if (message.type === 'command') {
          const reply = this.answer(message);
          if (reply) this.ws.send(JSON.stringify({ type: 'result', id: message.id, ...reply }));
        }
      });
      this.ws.on('close', (code, reason) => {
        this.closed = { code, reason: reason.toString() };
        reject(new Error(`closed ${code} ${reason}`));
      });
      this.ws.on('error', reject);
    });
  }

  heartbeat(): void {
    this.ws.send(JSON.stringify({ type: 'heartbeat', ts: Date.now() }));
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
