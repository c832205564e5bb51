-- Own networks (docs/networks.md): address ranges an operator names per tenant, consulted before
-- the public IP → organization dataset. `cidr` is canonical (network address, no host bits;
-- IPv4 as a.b.c.d/n), so one network has one spelling and the key rejects a duplicate.
CREATE TABLE own_networks (
  customer_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  cidr        text NOT NULL,
  name        text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('internal', 'external')),
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, cidr)
);
