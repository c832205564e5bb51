#!/usr/bin/env bash
# The production install as the README gives it, on a fresh clone of a commit (default HEAD; what
# is not committed is not checked) in a temporary directory: npm ci, npm run build, npm ci
# --omit=dev, then npm start (embedded, DATA_DIR in that directory, a free port), GET /health, and
# a token for a client the compiled admin CLI creates. Takes minutes (npm ci twice), so CI runs
# test/e2e/compiled-build.test.ts instead and this is the check before a release.
#   tools/check-production-install.sh [COMMIT]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse "${1:-HEAD}")
work=$(mktemp -d "${TMPDIR:-/tmp}/bd-production-install-XXXXXX")
server=
cleanup() {
  if [ -n "$server" ]; then
    kill -TERM -- "-$server" 2>/dev/null || true
    # npm exits before the service has stopped writing its data: wait for the whole group (≤ 30 s).
    for _ in $(seq 1 60); do
      kill -0 -- "-$server" 2>/dev/null || break
      sleep 0.5
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '%s  %s\n' "$(date -u +%T)" "$*"; }
json() { node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8'))$1"; }

step "clone $commit"
git clone -q --no-checkout "$repo" "$work/clone"
cd "$work/clone"
git checkout -q "$commit"
step 'npm ci'
npm ci --no-audit --no-fund --loglevel=error >"$work/ci.log" 2>&1 || { cat "$work/ci.log"; exit 1; }
step 'npm run build'
npm run -s build
step 'npm ci --omit=dev'
npm ci --omit=dev --no-audit --no-fund --loglevel=error
# (prisma and typescript stay: npm installs them as optional peers of @prisma/client.)
for dev in vitest @graphql-codegen/cli; do
  if [ -e "node_modules/$dev" ]; then echo "a dev dependency is installed: $dev" >&2; exit 1; fi
done

step 'npm start'
export DATA_DIR="$work/data" PORT=0 LOG_LEVEL=warn DATABASE_URL='' CLICKHOUSE_URL=''
# Its own process group: the cleanup stops npm, the launcher and the service, and nothing else.
setsid npm start >"$work/server.log" 2>&1 &
server=$!
url=
for _ in $(seq 1 120); do
  url=$(grep -o 'listening on http://[^ ]*' "$work/server.log" | cut -d' ' -f3 || true)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 1
done
[ -n "$url" ] || { cat "$work/server.log"; echo 'the service did not start' >&2; exit 1; }
step "listening on $url"

curl -sf "$url/health" | json '.status' | grep -qx ok
step 'GET /health: ok'
customer=$(node dist/src/admin/cli.js tenant create --name Check --handle check --msp | json '.customer_id')
client=$(node dist/src/admin/cli.js client create --customer "$customer" --scopes p.token.scope.deployment_api)
id=$(printf '%s' "$client" | json '.client_id') secret=$(printf '%s' "$client" | json '.client_secret')
token=$(curl -sf "$url/rest/oauth2/token/1.0" -H 'content-type: application/json' \
  -d "{\"client_id\":\"$id\",\"client_secret\":\"$secret\"}" | json '.access_token')
curl -sf "$url/rest/deployments/1.0" -H "authorization: Bearer $token" | json '.count' >/dev/null
step 'token issued and accepted: the production install serves'
