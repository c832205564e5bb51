#!/usr/bin/env bash
# Makes the PostgreSQL the integration tests use available: TEST_DATABASE_URL when given, else
# the machine's Debian PostgreSQL (installed and started here if need be; CI starts from nothing).
set -euo pipefail
if [ -n "${TEST_DATABASE_URL:-}" ]; then exit 0; fi
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  echo "ensure-postgres: installing Debian's postgresql" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  service postgresql start >&2
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi
# The tests connect over TCP with a password; the Debian default allows peer auth only locally.
su postgres -c "psql -qtAc \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null
