/**
 * The benchmarks' HTTP client: HTTP/1.1 written and read on kept-alive sockets, as load tools
 * (wrk, h2load) do. It is the instrument, so it should cost little. Against node:http's client,
 * alternated request by request (tools/bench/HISTORY.md): a bare node:http server answering
 * after 15 ms idle came back 0.65 ms sooner (2 B and 259 KB alike), and a 100-record search on
 * the 100M data 0.9 ms sooner, with the server doing the same work: that was node:http's client
 * taking its answer through streams on a cold cache. fetch (undici) cost more still.
 *
 * It reads what the service writes: a status line, headers, and a body of `content-length`
 * bytes. An answer without a length (chunked) is refused rather than misread.
 */
import net from 'node:net';

export interface HttpAnswer {
  status: number;
  /** From sending the request until its status line and headers arrived. */
  firstByteMs: number;
  /** In the connection's own memory: read it before the next request. */
  body: Buffer;
}

interface Exchange {
  sent: number;
  resolve(answer: HttpAnswer): void;
  reject(error: Error): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const NOTHING = Buffer.alloc(0);

/**
 * One kept-alive connection, one request at a time on it. The socket reads into one buffer of its
 * own (net's `onread`), up to 1 MiB a read, and the body is copied from it into a buffer of its
 * announced length: a 25,000-record page (63 MB) is not a thousand 64 KB chunks to join. That
 * buffer is the connection's, kept for its next answers: where a page fault is slow (~15 µs on
 * the VMs we run on) a new 63 MB buffer for each page cost the client ~250 ms of first touches,
 * which REST was timed with (tools/bench/HISTORY.md).
 */
class Connection {
  private readonly socket: net.Socket;
  private exchange: Exchange | undefined;
  /** Bytes of the answer's head received so far, while it is incomplete. */
  private headBytes = NOTHING;
  private head: { status: number; firstByteMs: number } | undefined;
  private body = NOTHING;
  /** Memory the bodies are read into, as big as the biggest so far. */
  private bodies = NOTHING;
  private filled = 0;
  /** Set once the socket can take no more requests. */
  closed = false;

  constructor(host: string, port: number) {
    const buffer = Buffer.allocUnsafe(1 << 20);
    const onread = { buffer, callback: (n: number) => (this.read(buffer.subarray(0, n)), true) };
    this.socket = net.connect({ host, port, noDelay: true, onread });
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('the server closed the connection')));
  }

  send(request: string, exchange: Exchange): void {
    this.exchange = exchange;
    this.socket.write(request);
  }

  /** `bytes` lie in the socket's read buffer, which the next read overwrites. */
  private read(bytes: Buffer): void {
    const exchange = this.exchange;
    if (!exchange) return this.fail(new Error('bytes arrived with no request outstanding'));
    if (!this.head) {
      const received = this.headBytes.length ? Buffer.concat([this.headBytes, bytes]) : bytes;
      const end = received.indexOf(HEAD_END);
      if (end < 0) return void (this.headBytes = Buffer.from(received));
      const text = received.toString('latin1', 0, end);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(text);
      if (!status || !length) return this.fail(new Error(`an answer the bench cannot read: ${text.slice(0, 200)}`));
      this.head = { status: Number(status[1]), firstByteMs: performance.now() - exchange.sent };
      this.headBytes = NOTHING;
      const bodyLength = Number(length[1]);
      if (bodyLength > this.bodies.length) this.bodies = Buffer.allocUnsafeSlow(bodyLength);
      this.body = this.bodies.subarray(0, bodyLength);
      bytes = received.subarray(end + HEAD_END.length);
    }
    if (this.filled + bytes.length > this.body.length) return this.fail(new Error('the server sent more than it announced'));
    this.filled += bytes.copy(this.body, this.filled);
    if (this.filled < this.body.length) return;
    const { status, firstByteMs } = this.head;
    const body = this.body;
    this.exchange = undefined;
    this.head = undefined;
    this.body = NOTHING;
    this.filled = 0;
    exchange.resolve({ status, firstByteMs, body });
  }

  private fail(error: Error): void {
    this.closed = true;
    this.socket.destroy();
    const exchange = this.exchange;
    this.exchange = undefined;
    exchange?.reject(this.head || this.headBytes.length ? error : new Unanswered(error));
  }
}

/** The connection failed before any byte of the answer came. */
class Unanswered extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

/** Idle connections per origin, reused most recent first; a request finding none opens one. */
const idle = new Map<string, Connection[]>();

export async function postJson(url: string, body: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const target = new URL(url);
  let request = `POST ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (const [name, value] of Object.entries(headers)) request += `${name}: ${value}\r\n`;
  request += `\r\n${body}`;
  const pool = idle.get(target.origin) ?? idle.set(target.origin, []).get(target.origin)!;
  for (;;) {
    let connection = pool.pop();
    while (connection?.closed) connection = pool.pop();
    const reused = connection !== undefined;
    connection ??= new Connection(target.hostname, Number(target.port || 80));
    try {
      const answer = await new Promise<HttpAnswer>((resolve, reject) => connection.send(request, { sent: performance.now(), resolve, reject }));
      if (!connection.closed) pool.push(connection);
      return answer;
    } catch (error) {
      // A kept-alive socket the server was closing as the request left: open a new one.
      if (reused && error instanceof Unanswered) continue;
      throw error instanceof Unanswered ? error.cause : error;
    }
  }
}
