/**
 * `tsx tools/bench/token-load.ts URL BODY RATE`: POSTs BODY to URL RATE times a second (open
 * loop: requests leave on schedule whatever the answers) until the parent sends a message, then
 * answers with the latency summary of the 200s; it says `ready` once warm (see below). A process
 * of its own, so the parent's work (JSON of 25,000-flow pages) cannot delay the measurement.
 */
import { postJson } from './http-client.js';

export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
}

/** What the token load measured: each token request's latency, and the requests that failed. */
export interface TokenLatencies {
  latencies: number[];
  failures: number;
}

export function summarize(ms: readonly number[]): LatencySummary {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99) };
}

if (process.send && process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [url, body, rate] = process.argv.slice(2);
  const send = () => postJson(url!, body!);
  // The client's own first requests (opening connections) are not the server's latency: a few
  // go out before the parent is told to start timing.
  for (let i = 0; i < 5; i++) await send();
  const latencies: number[] = [];
  let failures = 0;
  const timer = setInterval(
    () => {
      const started = performance.now();
      send()
        .then((res) => {
          if (res.status === 200) latencies.push(performance.now() - started);
          else failures++;
        })
        .catch(() => failures++);
    },
    1000 / Number(rate),
  );
  process.send('ready');
  process.on('message', () => {
    clearInterval(timer);
    // Let the requests in flight finish.
    setTimeout(() => process.send!({ latencies, failures } satisfies TokenLatencies, () => process.exit(0)), 500);
  });
}
