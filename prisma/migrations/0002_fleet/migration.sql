-- Fleet enrolment: profiles, nodes, one-time enrolment credentials, the device flow, releases.
CREATE TABLE profiles (
  id             text PRIMARY KEY,
  customer_id    text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name           text NOT NULL,
  description    text,
  services       jsonb NOT NULL DEFAULT '{}',
  tags           text[] NOT NULL DEFAULT '{}',
  update_channel text NOT NULL DEFAULT 'stable',
  auto_update    boolean NOT NULL DEFAULT true,
  fleet_staging  boolean NOT NULL DEFAULT false,
  created_at     timestamptz(3) NOT NULL DEFAULT now(),
  updated_at     timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX profiles_customer_id_idx ON profiles (customer_id);

CREATE TABLE nodes (
  id                      text PRIMARY KEY,
  customer_id             text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  machine_id              text,
  hostname                text,
  description             text,
  kind                    text NOT NULL DEFAULT 'managed',
  status                  text NOT NULL,
  profile_id              text REFERENCES profiles (id) ON DELETE SET NULL,
  client_id               text REFERENCES api_clients (id) ON DELETE SET NULL,
  collector_version       text,
  update_channel          text,
  os                      text,
  arch                    text,
  local_ip                text,
  public_ip               text,
  hardware                jsonb,
  reported_services       jsonb,
  last_seen_at            timestamptz(3),
  control_connected_at    timestamptz(3),
  control_disconnected_at timestamptz(3),
  ingest_seen_at          timestamptz(3),
  created_at              timestamptz(3) NOT NULL DEFAULT now(),
  updated_at              timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX nodes_customer_id_kind_machine_id_key ON nodes (customer_id, kind, machine_id);
CREATE INDEX nodes_customer_id_idx ON nodes (customer_id);
CREATE INDEX nodes_profile_id_idx ON nodes (profile_id);

CREATE TABLE enrolment_credentials (
  client_id   text PRIMARY KEY REFERENCES api_clients (id) ON DELETE CASCADE,
  customer_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  kind        text NOT NULL,
  machine_id  text,
  profile_id  text REFERENCES profiles (id) ON DELETE SET NULL,
  description text,
  node_id     text REFERENCES nodes (id) ON DELETE SET NULL,
  enrolled_at timestamptz(3),
  created_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX enrolment_credentials_customer_id_idx ON enrolment_credentials (customer_id);

CREATE TABLE device_authorizations (
  id               text PRIMARY KEY,
  code_hash        bytea NOT NULL,
  hostname         text NOT NULL,
  machine_id       text NOT NULL,
  node_id          text,
  status           text NOT NULL DEFAULT 'pending',
  customer_id      text REFERENCES tenants (id) ON DELETE CASCADE,
  decided_by       text,
  key_client_id    text,
  key_delivered_at timestamptz(3),
  last_polled_at   timestamptz(3),
  decided_at       timestamptz(3),
  created_at       timestamptz(3) NOT NULL DEFAULT now(),
  expires_at       timestamptz(3) NOT NULL
);
CREATE UNIQUE INDEX device_authorizations_code_hash_key ON device_authorizations (code_hash);
CREATE INDEX device_authorizations_customer_id_idx ON device_authorizations (customer_id);

CREATE TABLE collector_releases (
  id         text PRIMARY KEY,
  version    text NOT NULL,
  channel    text NOT NULL,
  os         text NOT NULL,
  arch       text NOT NULL,
  sha256     text NOT NULL,
  size       integer NOT NULL,
  filename   text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX collector_releases_channel_os_arch_version_key ON collector_releases (channel, os, arch, version);
CREATE INDEX collector_releases_channel_os_arch_created_at_idx ON collector_releases (channel, os, arch, created_at);

CREATE TABLE collector_release_assets (
  release_id text PRIMARY KEY REFERENCES collector_releases (id) ON DELETE CASCADE,
  content    bytea NOT NULL
);
