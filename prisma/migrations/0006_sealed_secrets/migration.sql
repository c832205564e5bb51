-- Secrets the database keeps are sealed under a key-encryption key that lives outside it
-- (SECRETS_KEY or DATA_DIR/secrets.key, src/infra/secrets-key.ts), so a dump alone yields none.
-- The key is not in the database, so the sealing itself happens at the server's start: these
-- columns keep the old values until then, and the server empties them as it seals each row.

-- A token signing key's private JWK, sealed; `legacy_private_jwk` is the plaintext of a row not
-- yet sealed.
ALTER TABLE signing_keys RENAME COLUMN private_jwk TO legacy_private_jwk;
ALTER TABLE signing_keys ALTER COLUMN legacy_private_jwk DROP NOT NULL;
ALTER TABLE signing_keys ADD COLUMN private_box bytea;
ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_private_key_kept
  CHECK (legacy_private_jwk IS NOT NULL OR private_box IS NOT NULL);

-- A webhook secret was sealed under a key derived from signing key `secret_kid`; now it is sealed
-- under the key-encryption key. `legacy_secret_kid` is set only on a row still in the old scheme.
ALTER TABLE automation_rules RENAME COLUMN secret_kid TO legacy_secret_kid;
