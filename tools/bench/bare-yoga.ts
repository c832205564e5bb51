// The baselines: graphql-yoga with nothing of ours, answering `{ __typename }`; and node:http
// answering `GET /static/<bytes>` with that many bytes held in memory, the most any answer of that
// size can be served at on this machine.
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { ok: Boolean }', resolvers: {} }),
  logging: false,
  landingPage: false,
});
const MAX_STATIC_BYTES = 16 * 1024 * 1024;
const held = new Map<number, Buffer>();
const server = createServer((req, res) => {
  const size = /^\/static\/(\d+)$/.exec(req.url ?? '');
  if (!size) return yoga(req, res);
  const bytes = Math.min(Number(size[1]), MAX_STATIC_BYTES);
  let body = held.get(bytes);
  if (!body) held.set(bytes, (body = Buffer.alloc(bytes, 'x')));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${address.port}`);
});
