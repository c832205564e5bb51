-- The audit log (docs/audit.md): one row per mutation a person or an API client took through
-- GraphQL (yoga, graphql-ws or a REST write), written in batches by src/modules/audit/audit-writer.ts.
-- Rows go with their tenant, and are removed by the purge job once older than AUDIT_RETENTION_DAYS.
CREATE TABLE audit_log (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id    text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  at             timestamptz(3) NOT NULL,
  -- `client`, `user`, or `anonymous` (a failed token request naming a real client).
  actor_kind     text NOT NULL,
  actor_id       text NOT NULL,
  -- An action of src/auth/actions.ts, or `public` for a public door.
  action         text NOT NULL,
  -- The Mutation field, e.g. `createProfile`.
  field          text NOT NULL,
  -- The ids the mutation named and an allow-list of harmless arguments; never a whole argument.
  target         jsonb NOT NULL DEFAULT '{}',
  -- `ok`, or the error code the caller was answered.
  result         text NOT NULL,
  request_id     text NOT NULL,
  client_address text,
  user_agent     text
);

-- Newest first within a tenant, with and without the filters the GraphQL field offers.
CREATE INDEX audit_log_tenant_at ON audit_log (customer_id, at DESC, id DESC);
CREATE INDEX audit_log_tenant_actor ON audit_log (customer_id, actor_id, at DESC, id DESC);
CREATE INDEX audit_log_tenant_action ON audit_log (customer_id, action, at DESC, id DESC);
-- Retention: the purge deletes by age across tenants.
CREATE INDEX audit_log_at ON audit_log (at);
