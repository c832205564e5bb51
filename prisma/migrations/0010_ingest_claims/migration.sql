-- Ingest claims (docs/flowstore.md "Group commit"): a server process claims a collector's batch
-- while it stores it, so that two processes never insert the same batch at once. A claim is
-- removed once its batch is stored; one left by a process that died lapses at expires_at.
CREATE TABLE ingest_claims (
  customer_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  token       text NOT NULL,
  owner       text NOT NULL,
  expires_at  timestamptz(3) NOT NULL,
  PRIMARY KEY (customer_id, token)
);
