-- Tenants: customers, MSP parents and their child deployments.
CREATE TABLE tenants (
  id                text PRIMARY KEY,
  name              text,
  handle            text,
  type              text NOT NULL,
  parent_id         text REFERENCES tenants (id) ON DELETE CASCADE,
  is_msp            boolean NOT NULL DEFAULT false,
  subdomain         text,
  org_code          text,
  deployment_status text NOT NULL DEFAULT 'deployed',
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  updated_at        timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tenants_parent_id_handle_key ON tenants (parent_id, handle);
CREATE INDEX tenants_parent_id_idx ON tenants (parent_id);

-- OAuth2 client credentials; the secret only as its SHA-256.
CREATE TABLE api_clients (
  id          text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  secret_hash bytea NOT NULL,
  scopes      text[] NOT NULL,
  description text,
  kind        text NOT NULL DEFAULT 'api',
  revoked_at  timestamptz(3),
  created_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX api_clients_customer_id_idx ON api_clients (customer_id);

-- Token signing keys (JWK). Retired keys stay until the last token they signed has expired.
CREATE TABLE signing_keys (
  kid         text PRIMARY KEY,
  alg         text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk  jsonb NOT NULL,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  retired_at  timestamptz(3)
);

-- Change notifications between processes. pg_notify reaches every LISTENing connection of a
-- PostgreSQL server. The embedded PGlite is one backend behind a socket multiplexer, where a
-- notification surfaces on whichever connection caused it; there the server sets
-- app.notification_outbox and polls this outbox instead.
CREATE TABLE _notifications (
  id         bigserial PRIMARY KEY,
  channel    text NOT NULL,
  payload    text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION app_notify(channel text, payload text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(channel, payload);
  IF current_setting('app.notification_outbox', true) = 'on' THEN
    INSERT INTO _notifications (channel, payload) VALUES (channel, payload);
  END IF;
END $$;

-- Every server process caches credentials and keys; these triggers tell all of them when one
-- changes, whichever process (a server, the admin CLI, a cascade) made the change.
CREATE FUNCTION notify_client_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM app_notify('auth_client_changed', OLD.id);
  RETURN NULL;
END $$;
CREATE TRIGGER api_clients_changed AFTER UPDATE OR DELETE ON api_clients
  FOR EACH ROW EXECUTE FUNCTION notify_client_change();

CREATE FUNCTION notify_signing_keys_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM app_notify('auth_keys_changed', '');
  RETURN NULL;
END $$;
CREATE TRIGGER signing_keys_changed AFTER INSERT OR UPDATE OR DELETE ON signing_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_signing_keys_change();

-- Servers cache the tenant tree (every authenticated call asks it); this keeps the caches true.
CREATE FUNCTION notify_tenant_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed tenants;
BEGIN
  IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
  PERFORM app_notify('tenant_changed', changed.id || ',' || coalesce(changed.parent_id, ''));
  IF TG_OP = 'UPDATE' AND OLD.parent_id IS DISTINCT FROM NEW.parent_id THEN
    PERFORM app_notify('tenant_changed', OLD.id || ',' || coalesce(OLD.parent_id, ''));
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE ON tenants
  FOR EACH ROW EXECUTE FUNCTION notify_tenant_change();
