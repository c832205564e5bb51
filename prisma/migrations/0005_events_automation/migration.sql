-- Events (docs/events.md) and automation rules with their runs (docs/automation.md).

-- What happened inside the service, per tenant and topic. Read newest first, one topic at a time.
CREATE TABLE events (
  id          text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  topic       text NOT NULL,
  kind        text NOT NULL,
  subject     text,
  data        jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX events_customer_id_topic_created_at_id_idx ON events (customer_id, topic, created_at DESC, id DESC);
-- Retention prunes by age.
CREATE INDEX events_created_at_idx ON events (created_at);

-- Rules that react to events of their tenant and its children. A webhook's signing secret is kept
-- encrypted (AES-256-GCM under a key derived from token signing key `secret_kid`): the server must
-- sign with it, so a one-way hash would not do.
CREATE TABLE automation_rules (
  id          text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name        text NOT NULL,
  enabled     boolean NOT NULL DEFAULT true,
  topic       text NOT NULL,
  kinds       text[] NOT NULL DEFAULT '{}',
  conditions  jsonb NOT NULL DEFAULT '[]',
  action      text NOT NULL,
  webhook_url text,
  secret_kid  text,
  secret_box  bytea,
  created_by  text,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  updated_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX automation_rules_customer_id_topic_idx ON automation_rules (customer_id, topic);

-- One run per (rule, event): the work queue and the run history at once. Due rows (pending,
-- retrying, or running past their lease) are claimed with FOR UPDATE SKIP LOCKED, so every server
-- process can share the work; `attempts` doubles as the fencing token of a claim.
CREATE TABLE automation_runs (
  id            text PRIMARY KEY,
  rule_id       text NOT NULL REFERENCES automation_rules (id) ON DELETE CASCADE,
  customer_id   text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  event_id      text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  status        text NOT NULL DEFAULT 'pending',
  attempts      integer NOT NULL DEFAULT 0,
  due_at        timestamptz(3) NOT NULL DEFAULT now(),
  lease_until   timestamptz(3),
  response_code integer,
  last_error    text,
  result        jsonb,
  attempt_log   jsonb NOT NULL DEFAULT '[]',
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  updated_at    timestamptz(3) NOT NULL DEFAULT now(),
  finished_at   timestamptz(3)
);
CREATE UNIQUE INDEX automation_runs_rule_id_event_id_key ON automation_runs (rule_id, event_id);
CREATE INDEX automation_runs_rule_id_created_at_idx ON automation_runs (rule_id, created_at DESC);
CREATE INDEX automation_runs_event_id_idx ON automation_runs (event_id);
CREATE INDEX automation_runs_due_idx ON automation_runs (due_at) WHERE status IN ('pending', 'retrying', 'running');
