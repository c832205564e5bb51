-- The device flow's user code (RFC 8628): the approval link carries it instead of the device
-- code, which stays with the device. Kept as SHA-256 like the device code. Rows from before this
-- migration have none: their old links still name the device code, which the info and approve
-- endpoints still accept.
ALTER TABLE device_authorizations ADD COLUMN user_code_hash bytea;
CREATE UNIQUE INDEX device_authorizations_user_code_hash_key ON device_authorizations (user_code_hash);
-- The purge of expired authorizations goes by expiry.
CREATE INDEX device_authorizations_expires_at_idx ON device_authorizations (expires_at);

-- Fixed-window request counters of the anonymous endpoints (token, device flow), shared by every
-- server process: one row per limit and caller (address or client id), reset when its window
-- has passed; rows of past windows are purged on a schedule.
CREATE UNLOGGED TABLE rate_limit_counters (
  bucket       text PRIMARY KEY,
  window_start timestamptz(3) NOT NULL,
  hits         integer NOT NULL
);
CREATE INDEX rate_limit_counters_window_start_idx ON rate_limit_counters (window_start);
