-- Triage (docs/triage.md): what a person or API client makes of an investigation — its status,
-- the answer to "was this activity authorized?", comments and the history of all of it — and the
-- suppressions an AUTHORIZED answer creates, which detection honours.

-- Enums rather than text: their declaration order is the order `sort` uses (NEW first, the most
-- urgent answer first).
CREATE TYPE triage_status AS ENUM ('new', 'acknowledged', 'in_progress', 'resolved');
CREATE TYPE triage_resolution AS ENUM ('authorized', 'malicious', 'false_positive', 'duplicate');
CREATE TYPE triage_answer AS ENUM ('unauthorized', 'unsure', 'authorized');

ALTER TABLE investigations
  ADD COLUMN triage_status    triage_status NOT NULL DEFAULT 'new',
  -- set exactly while triage_status = 'resolved'
  ADD COLUMN resolution       triage_resolution,
  ADD COLUMN resolved_at      timestamptz(3),
  ADD COLUMN answer           triage_answer,
  ADD COLUMN answer_note      text,
  -- who answered: client | user, and its id (session.actor)
  ADD COLUMN answered_by_kind text,
  ADD COLUMN answered_by_id   text,
  ADD COLUMN answered_at      timestamptz(3),
  -- a person of the tenant (users.id); no foreign key until the users table is merged
  ADD COLUMN assignee_id      text,
  -- the points an UNAUTHORIZED answer added to the detector's severity (kept across re-analysis)
  ADD COLUMN severity_raise   integer NOT NULL DEFAULT 0,
  ADD CONSTRAINT investigations_resolution_check CHECK ((triage_status = 'resolved') = (resolution IS NOT NULL));
CREATE INDEX investigations_customer_id_triage_status_idx ON investigations (customer_id, triage_status, severity DESC, id DESC);
CREATE INDEX investigations_customer_id_assignee_id_idx ON investigations (customer_id, assignee_id);

CREATE TABLE investigation_comments (
  id               text PRIMARY KEY,
  customer_id      text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  investigation_id text NOT NULL REFERENCES investigations (id) ON DELETE CASCADE,
  actor_kind       text NOT NULL,
  actor_id         text NOT NULL,
  text             text NOT NULL,
  created_at       timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX investigation_comments_thread_idx ON investigation_comments (customer_id, investigation_id, created_at, id);

-- Every answer, status change, comment and suppression of an investigation, oldest first.
CREATE TABLE investigation_activity (
  id               text PRIMARY KEY,
  customer_id      text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  investigation_id text NOT NULL REFERENCES investigations (id) ON DELETE CASCADE,
  -- answered | status_changed | reopened | commented | suppressed | suppression_revoked
  kind             text NOT NULL,
  actor_kind       text NOT NULL,
  actor_id         text NOT NULL,
  data             jsonb NOT NULL DEFAULT '{}',
  created_at       timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX investigation_activity_history_idx ON investigation_activity (customer_id, investigation_id, created_at, id);

-- A subject detection leaves alone: one detector's episodes from a source to a destination.
CREATE TABLE suppressions (
  id               text PRIMARY KEY,
  customer_id      text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  detector         text NOT NULL,
  source           text NOT NULL,
  destination      text NOT NULL,
  reason           text,
  -- the investigation whose AUTHORIZED answer created it
  investigation_id text REFERENCES investigations (id) ON DELETE SET NULL,
  actor_kind       text NOT NULL,
  actor_id         text NOT NULL,
  created_at       timestamptz(3) NOT NULL DEFAULT now(),
  expires_at       timestamptz(3) NOT NULL,
  revoked_at       timestamptz(3),
  revoked_by_kind  text,
  revoked_by_id    text
);
CREATE INDEX suppressions_customer_id_created_at_idx ON suppressions (customer_id, created_at DESC, id DESC);
CREATE INDEX suppressions_in_force_idx ON suppressions (customer_id, detector, source, destination) WHERE revoked_at IS NULL;
