-- A person's display name (docs/users.md): what the console and the triage history call them.
-- Null until they, an admin inviting them, or their organization's sign-on gives one.
ALTER TABLE users ADD COLUMN name text;
