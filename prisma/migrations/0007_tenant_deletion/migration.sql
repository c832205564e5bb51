-- Tenant deletion as a durable job (docs/architecture.md, Tenant deletion). Deleting a tenant sets
-- its deployment_status to 'deleting' (hidden from every list and lookup from then on), revokes
-- its clients and queues a row here, in one transaction; a worker then removes what the tenant
-- owns outside PostgreSQL (its flows in ClickHouse), records how far it got in `steps`, and
-- finally deletes the tenant's row (the foreign keys cascade). The row here stays, finished, as
-- the record the admin CLI shows (`tenant deletions`). No foreign key: it outlives the tenant.
CREATE TABLE tenant_deletions (
  customer_id  text PRIMARY KEY,
  parent_id    text,
  name         text,
  handle       text,
  state        text NOT NULL DEFAULT 'deleting',
  steps        jsonb NOT NULL DEFAULT '{}',
  attempts     integer NOT NULL DEFAULT 0,
  last_error   text,
  requested_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at   timestamptz(3) NOT NULL DEFAULT now(),
  finished_at  timestamptz(3)
);
-- The worker reads the unfinished ones, oldest first.
CREATE INDEX tenant_deletions_state_requested_at_idx ON tenant_deletions (state, requested_at);

-- Every server's deletion worker wakes when a job is queued, whichever process queued it.
CREATE FUNCTION notify_tenant_deletion_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM app_notify('tenant_deletion_queued', NEW.customer_id);
  RETURN NULL;
END $$;
CREATE TRIGGER tenant_deletions_queued AFTER INSERT ON tenant_deletions
  FOR EACH ROW EXECUTE FUNCTION notify_tenant_deletion_queued();
