-- Console users (docs/users.md): people of a tenant with a role, signing in with a password
-- (argon2id) and optionally a TOTP second factor. Emails are stored lowercased and unique
-- whatever their case. Secrets are never stored in the clear: the password as an argon2id PHC
-- string, the TOTP secret sealed under the secrets key, one-time tokens and session ids as SHA-256.
CREATE TABLE users (
  id                text PRIMARY KEY,
  customer_id       text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  email             text NOT NULL,
  role              text NOT NULL CHECK (role IN ('viewer', 'analyst', 'admin')),
  status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  password_hash     text,
  -- Consecutive failed sign-ins, and until when the account refuses sign-ins after too many.
  failed_sign_ins   integer NOT NULL DEFAULT 0,
  locked_until      timestamptz(3),
  -- The TOTP secret being enrolled (until confirmed) and the one in use, each sealed.
  totp_pending_box  bytea,
  totp_box          bytea,
  -- The last time step a code was accepted for: a code is good once.
  totp_last_step    bigint,
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  updated_at        timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_customer_id_idx ON users (customer_id);

-- A person's sign-in: the cookie holds a random id, the table its SHA-256. It ends at
-- `expires_at` (absolute), after the idle period since `last_seen_at`, or when revoked.
CREATE TABLE user_sessions (
  id            text PRIMARY KEY,
  token_hash    bytea NOT NULL UNIQUE,
  user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  customer_id   text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  address       text,
  user_agent    text,
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  last_seen_at  timestamptz(3) NOT NULL DEFAULT now(),
  expires_at    timestamptz(3) NOT NULL,
  revoked_at    timestamptz(3)
);
CREATE INDEX user_sessions_user_id_idx ON user_sessions (user_id);
CREATE INDEX user_sessions_expires_at_idx ON user_sessions (expires_at);

-- One-time set-password links (an invitation or a reset), kept as SHA-256.
CREATE TABLE user_password_tokens (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at  timestamptz(3) NOT NULL,
  used_at     timestamptz(3),
  created_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX user_password_tokens_user_id_idx ON user_password_tokens (user_id);

-- Recovery codes of the second factor, each good once, kept as SHA-256.
CREATE TABLE user_recovery_codes (
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash  bytea NOT NULL,
  used_at    timestamptz(3),
  PRIMARY KEY (user_id, code_hash)
);

-- graphql-ws sockets opened with a session close when it is revoked or its person changes, in
-- every server process: these announce the person whose sessions must be checked again.
CREATE FUNCTION notify_user_sessions_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM app_notify('user_sessions_changed', OLD.user_id);
  RETURN NULL;
END $$;
CREATE TRIGGER user_sessions_changed AFTER UPDATE OF revoked_at OR DELETE ON user_sessions
  FOR EACH ROW EXECUTE FUNCTION notify_user_sessions_change();

CREATE FUNCTION notify_user_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM app_notify('user_sessions_changed', OLD.id);
  RETURN NULL;
END $$;
CREATE TRIGGER users_changed AFTER UPDATE OF role, status, customer_id OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION notify_user_change();

-- Device decisions record who decided: an API client or a person.
ALTER TABLE device_authorizations ADD COLUMN decided_by_kind text;

-- Single sign-on with OpenID Connect, per tenant (docs/users.md): the provider, its client, the
-- client secret sealed under the secrets key, and how its claims map to a role.
CREATE TABLE oidc_providers (
  customer_id        text PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  issuer             text NOT NULL,
  client_id          text NOT NULL,
  client_secret_box  bytea NOT NULL,
  -- [{"group": "...", "role": "..."} | {"email_domain": "...", "role": "..."}], first match wins.
  role_rules         jsonb NOT NULL DEFAULT '[]',
  default_role       text CHECK (default_role IN ('viewer', 'analyst', 'admin')),
  updated_at         timestamptz(3) NOT NULL DEFAULT now()
);

-- A sign-in on its way through the provider: its state (as SHA-256), PKCE verifier and nonce,
-- for ten minutes at most, taken once by the callback.
CREATE TABLE oidc_logins (
  state_hash     bytea PRIMARY KEY,
  customer_id    text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  code_verifier  text NOT NULL,
  nonce          text NOT NULL,
  expires_at     timestamptz(3) NOT NULL
);
CREATE INDEX oidc_logins_expires_at_idx ON oidc_logins (expires_at);
