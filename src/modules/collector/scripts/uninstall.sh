#!/usr/bin/env bash
# Removes the Prophet network collector installed by install.sh: stops and disables the service,
# removes its systemd unit (Linux) or launchd plist (macOS), the binary, and the local
# configuration and state. Served by GET /rest/collector/uninstall/1.0; run it as root:
#
#   curl -fsSL "$BASE_URL/rest/collector/uninstall/1.0" | sudo bash
#
# Optional environment, as for install.sh: PROPHET_INSTALL_ROOT, PROPHET_OS,
# PROPHET_SYSTEMD_DIR, PROPHET_SYSTEMCTL, PROPHET_LAUNCHD_DIR, PROPHET_LAUNCHCTL.
set -euo pipefail

BASE_URL=__PROPHET_BASE_URL__
SERVICE=prophet-node
LAUNCHD_LABEL=io.prophet.node

say() { printf 'prophet-uninstall: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

os=${PROPHET_OS:-$(uname -s)}
case $os in
  Linux | linux) OS=linux ;;
  Darwin | darwin) OS=darwin ;;
  *) die "unsupported operating system: $os (this script supports Linux and macOS)" ;;
esac

if [ "$OS" = darwin ]; then default_root=/usr/local/prophet; else default_root=/data/apps/prophet; fi
ROOT=${PROPHET_INSTALL_ROOT:-$default_root}
ROOT=${ROOT%/}
if ! [[ $ROOT =~ ^/[A-Za-z0-9._/-]+$ ]]; then
  die "PROPHET_INSTALL_ROOT must be an absolute path of letters, digits, '.', '_', '-' and '/'"
fi

remove_systemd() {
  local dir=${PROPHET_SYSTEMD_DIR:-/lib/systemd/system}
  local systemctl=${PROPHET_SYSTEMCTL:-systemctl}
  local unit=$dir/$SERVICE.service
  if command -v "$systemctl" >/dev/null 2>&1; then
    "$systemctl" disable --now "$SERVICE" >/dev/null 2>&1 || say "$SERVICE was not enabled"
  fi
  rm -f "$unit"
  if command -v "$systemctl" >/dev/null 2>&1; then
    "$systemctl" daemon-reload || true
    "$systemctl" reset-failed "$SERVICE" >/dev/null 2>&1 || true
  fi
}

remove_launchd() {
  local dir=${PROPHET_LAUNCHD_DIR:-/Library/LaunchDaemons}
  local launchctl=${PROPHET_LAUNCHCTL:-launchctl}
  if command -v "$launchctl" >/dev/null 2>&1; then
    "$launchctl" bootout "system/$LAUNCHD_LABEL" >/dev/null 2>&1 || say "$LAUNCHD_LABEL was not loaded"
    "$launchctl" disable "system/$LAUNCHD_LABEL" >/dev/null 2>&1 || true
  fi
  rm -f "$dir/$LAUNCHD_LABEL.plist"
}

if [ "$OS" = linux ]; then remove_systemd; else remove_launchd; fi

# Only what install.sh created: the root itself goes only if nothing else was put in it.
rm -f "$ROOT/bin/prophet" "$ROOT/bin/prophet.new"
rm -rf "$ROOT/state" "$ROOT/spool" "$ROOT/logs"
rmdir "$ROOT/bin" 2>/dev/null || true
rmdir "$ROOT" 2>/dev/null || true
say "removed the collector (service $SERVICE, binary and configuration under $ROOT) installed from $BASE_URL"
