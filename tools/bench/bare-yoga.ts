// The baseline: graphql-yoga with nothing of ours, answering `{ __typename }`.
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { ok: Boolean }', resolvers: {} }),
  logging: false,
  landingPage: false,
});
const server = createServer(yoga);
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${address.port}`);
});
