-- Single sign-on with OpenID Connect (docs/sso.md): one identity provider per
-- tenant, its client secret sealed under the secrets key, and the sign-ins under way (a browser
-- sent to the provider and not yet back), each good for one callback within ten minutes.
CREATE TABLE sso_connections (
  customer_id       text PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  issuer            text NOT NULL,
  client_id         text NOT NULL,
  client_secret_box bytea NOT NULL,
  groups_claim      text NOT NULL,
  role_rules        jsonb NOT NULL,
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  updated_at        timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE sso_sign_ins (
  state_hash    bytea PRIMARY KEY,
  customer_id   text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  code_verifier text NOT NULL,
  nonce         text NOT NULL,
  return_to     text NOT NULL,
  expires_at    timestamptz(3) NOT NULL
);
CREATE INDEX sso_sign_ins_expires_at ON sso_sign_ins (expires_at);
