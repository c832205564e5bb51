-- Investigations (wire.md 8) opened, updated and closed by the detectors (docs/detections.md),
-- and the detection runs that produced them.

CREATE TABLE investigations (
  id                   text PRIMARY KEY,
  customer_id          text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- beacon | exfil | scan | bruteforce | dns-tunnel
  detector             text NOT NULL,
  -- source|destination: what later runs match to update instead of opening another
  subject              text NOT NULL,
  -- detector + tenant + source + destination + first-activity bucket: one investigation per episode
  fingerprint          text NOT NULL,
  -- running (analysis in progress) | completed | failed
  status               text NOT NULL DEFAULT 'running',
  disposition          text,
  confidence           double precision,
  severity             integer NOT NULL DEFAULT 0,
  headline             text,
  source               text,
  destination          text,
  tags                 text[] NOT NULL DEFAULT '{}',
  related_alerts_count integer NOT NULL DEFAULT 0,
  -- the collectors whose flows show the activity
  node_ids             text[] NOT NULL DEFAULT '{}',
  -- the detector's episode: measurements, facts and activity (what the analysis is built from)
  evidence             jsonb NOT NULL DEFAULT '{}',
  -- trigger, verdict, at-a-glance, findings, provenance, decision support, meta (camelCase)
  analysis             jsonb,
  first_activity_at    timestamptz(3) NOT NULL,
  last_activity_at     timestamptz(3) NOT NULL,
  detected_at          timestamptz(3) NOT NULL,
  -- set when the activity has been quiet for the detector's quiet period
  closed_at            timestamptz(3),
  completed_at         timestamptz(3),
  created_at           timestamptz(3) NOT NULL DEFAULT now(),
  updated_at           timestamptz(3) NOT NULL DEFAULT now()
);
-- The analysis and evidence documents (several KB) go to TOAST storage even when they would fit in
-- the row, so that the rows lists and filters scan stay a few hundred bytes wide.
ALTER TABLE investigations SET (toast_tuple_target = 128);
CREATE UNIQUE INDEX investigations_customer_id_fingerprint_key ON investigations (customer_id, fingerprint);
CREATE INDEX investigations_customer_id_severity_detected_at_id_idx ON investigations (customer_id, severity DESC, detected_at DESC, id DESC);
CREATE INDEX investigations_customer_id_created_at_id_idx ON investigations (customer_id, created_at DESC, id DESC);
CREATE INDEX investigations_customer_id_detector_subject_last_activity_at_idx ON investigations (customer_id, detector, subject, last_activity_at);
CREATE INDEX investigations_active_idx ON investigations (customer_id) WHERE closed_at IS NULL;

CREATE TABLE detection_runs (
  id           text PRIMARY KEY,
  customer_id  text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- schedule | manual
  trigger      text NOT NULL,
  -- requested | running | completed | failed
  status       text NOT NULL,
  -- the tenants the run covers: the customer, and its children for a manual run
  tenant_ids   text[] NOT NULL DEFAULT '{}',
  window_start timestamptz(3) NOT NULL,
  window_end   timestamptz(3) NOT NULL,
  -- what it opened, updated and closed
  result       jsonb,
  error        text,
  -- the process that ran it (host:pid)
  claimed_by   text,
  requested_at timestamptz(3) NOT NULL DEFAULT now(),
  started_at   timestamptz(3),
  finished_at  timestamptz(3)
);
CREATE INDEX detection_runs_customer_id_requested_at_idx ON detection_runs (customer_id, requested_at);
CREATE INDEX detection_runs_requested_at_idx ON detection_runs (requested_at);
CREATE INDEX detection_runs_pending_idx ON detection_runs (requested_at) WHERE status = 'requested';
