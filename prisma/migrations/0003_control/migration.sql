-- The collector control channel (docs/collector-protocol.md).

-- Which channel currently holds the node; a disconnect only counts for the channel that holds it.
ALTER TABLE nodes ADD COLUMN control_session text;

-- Answers to commands relayed between server processes (a NOTIFY payload is too small for them).
CREATE TABLE node_command_results (
  id         text PRIMARY KEY,
  node_id    text NOT NULL,
  ok         boolean NOT NULL,
  data       jsonb,
  error      jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX node_command_results_created_at_idx ON node_command_results (created_at);

-- A node's delivered configuration changes when its profile does, or when it gets another one
-- (including a deleted profile's ON DELETE SET NULL): connected collectors are sent the new one.
CREATE FUNCTION notify_node_profile_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.profile_id IS DISTINCT FROM NEW.profile_id THEN
    PERFORM app_notify('node_config_changed', NEW.id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER nodes_profile_changed AFTER UPDATE OF profile_id ON nodes
  FOR EACH ROW EXECUTE FUNCTION notify_node_profile_change();

CREATE FUNCTION notify_profile_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM app_notify('profile_changed', NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER profiles_changed AFTER UPDATE ON profiles
  FOR EACH ROW EXECUTE FUNCTION notify_profile_change();
