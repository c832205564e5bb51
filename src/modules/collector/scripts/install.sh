#!/usr/bin/env bash
# Installs the Prophet network collector and runs it as a system service (systemd on Linux,
# launchd on macOS). Served by GET /rest/collector/install/1.0; run it as root:
#
#   curl -fsSL "$BASE_URL/rest/collector/install/1.0" | sudo bash -s -- <access_key>
#
# <access_key> is the `<client_id>.<client_secret>` from POST /rest/nodes/provision/1.0.
#
# Optional environment:
#   PROPHET_INSTALL_ROOT  install root (default /data/apps/prophet; /usr/local/prophet on macOS)
#   PROPHET_CHANNEL       release channel, stable or dev (default: the server's default)
#   PROPHET_OS, PROPHET_ARCH                 skip detection (e.g. linux, arm7)
#   PROPHET_SYSTEMD_DIR, PROPHET_SYSTEMCTL   unit directory and systemctl command
#   PROPHET_LAUNCHD_DIR, PROPHET_LAUNCHCTL   plist directory and launchctl command
set -euo pipefail
umask 022

BASE_URL=__PROPHET_BASE_URL__
DEFAULT_CHANNEL=__PROPHET_DEFAULT_CHANNEL__
SERVICE=prophet-node
LAUNCHD_LABEL=io.prophet.node

say() { printf 'prophet-install: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

usage() {
  cat >&2 <<EOF
usage: install.sh <access_key>
  <access_key>  the provisioning credential, <client_id>.<client_secret>
example:
  curl -fsSL '$BASE_URL/rest/collector/install/1.0' | sudo bash -s -- <access_key>
EOF
  exit 2
}

if [ $# -lt 1 ] || [ -z "$1" ]; then usage; fi
ACCESS_KEY=$1
if ! [[ $ACCESS_KEY =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9._~+/=-]+$ ]]; then
  die "the access key must look like <client_id>.<client_secret>"
fi

detect_os() {
  local os=${PROPHET_OS:-$(uname -s)}
  case $os in
    Linux | linux) echo linux ;;
    Darwin | darwin) echo darwin ;;
    *) die "unsupported operating system: $os (this installer supports Linux and macOS)" ;;
  esac
}

detect_arch() {
  local arch=${PROPHET_ARCH:-$(uname -m)}
  case $arch in
    x86_64 | amd64) echo amd64 ;;
    armv7l | armv7 | armv7hl | armhf | arm7) echo arm7 ;;
    aarch64 | arm64) echo arm64 ;;
    *) die "unsupported CPU architecture: $arch" ;;
  esac
}

OS=$(detect_os)
ARCH=$(detect_arch)
case $OS/$ARCH in
  linux/amd64 | linux/arm7 | darwin/arm64) ;;
  *) die "there is no collector build for $OS/$ARCH (builds: linux/amd64, linux/arm7, darwin/arm64)" ;;
esac

CHANNEL=${PROPHET_CHANNEL:-$DEFAULT_CHANNEL}
case $CHANNEL in
  stable | dev) ;;
  *) die "PROPHET_CHANNEL must be stable or dev, not $CHANNEL" ;;
esac

if [ "$OS" = darwin ]; then default_root=/usr/local/prophet; else default_root=/data/apps/prophet; fi
ROOT=${PROPHET_INSTALL_ROOT:-$default_root}
ROOT=${ROOT%/}
# The root goes into a systemd unit, a plist and YAML unquoted: keep it to plain path characters.
if ! [[ $ROOT =~ ^/[A-Za-z0-9._/-]+$ ]]; then
  die "PROPHET_INSTALL_ROOT must be an absolute path of letters, digits, '.', '_', '-' and '/'"
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256_of() { sha256sum "$1" | awk '{ print $1 }'; }
elif command -v shasum >/dev/null 2>&1; then
  sha256_of() { shasum -a 256 "$1" | awk '{ print $1 }'; }
else
  die "sha256sum or shasum is required"
fi
command -v tar >/dev/null 2>&1 || die "tar is required"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/prophet-install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# --- download (the endpoint redirects to a short-lived signed link to the tarball) -----------
URL="$BASE_URL/rest/collector/download/1.0?os=$OS&arch=$ARCH&channel=$CHANNEL"
TARBALL=$TMP/collector.tar.gz
say "downloading the $CHANNEL collector for $OS/$ARCH from $BASE_URL"
if command -v curl >/dev/null 2>&1; then
  status=$(curl -sSL --retry 3 -D "$TMP/headers" -o "$TARBALL" -w '%{http_code}' "$URL") ||
    die "could not download $URL"
  if [ "$status" != 200 ]; then
    die "download failed with HTTP $status: $(head -c 300 "$TARBALL" 2>/dev/null || true)"
  fi
elif command -v wget >/dev/null 2>&1; then
  wget -q -S --tries=3 -O "$TARBALL" "$URL" 2>"$TMP/headers" || die "could not download $URL"
else
  die "curl or wget is required"
fi

# Headers of every response in the redirect chain: the tarball's own come last.
expected=$(tr -d '\r' <"$TMP/headers" | awk 'tolower($1) == "x-checksum-sha256:" { sum = tolower($2) } END { print sum }')
[ -n "$expected" ] || die "the download carried no X-Checksum-Sha256 header"
actual=$(sha256_of "$TARBALL")
[ "$actual" = "$expected" ] || die "checksum mismatch: expected $expected, got $actual"

mkdir "$TMP/unpacked"
tar -xzf "$TARBALL" -C "$TMP/unpacked" || die "the download is not a gzip tar"
BINARY=$(find "$TMP/unpacked" -type f -name prophet -print | sed -n 1p)
[ -n "$BINARY" ] || die "the tarball holds no file named prophet"

# --- install -----------------------------------------------------------------------------------
upgrade=false
if [ -e "$ROOT/bin/prophet" ]; then upgrade=true; fi
install -d -m 0755 "$ROOT" "$ROOT/bin" || die "cannot create $ROOT (run the installer as root)"
install -d -m 0700 "$ROOT/state" "$ROOT/spool"
# Replaced by rename, so a running collector's binary is never written over in place.
install -m 0755 "$BINARY" "$ROOT/bin/prophet.new"
mv -f "$ROOT/bin/prophet.new" "$ROOT/bin/prophet"

case $BASE_URL in
  *dev.prophet.io*) env=dev ;;
  *) env=prod ;;
esac
CONFIG=$ROOT/state/prophet_collector.yaml
(
  umask 077
  cat >"$CONFIG.new" <<EOF
# Written by the Prophet collector installer. It holds a credential: keep it mode 0600.
env: $env
base_url: "$BASE_URL"
access_key: "$ACCESS_KEY"
spool_dir: "$ROOT/spool"
EOF
)
chmod 0600 "$CONFIG.new"
mv -f "$CONFIG.new" "$CONFIG"

install_systemd() {
  local dir=${PROPHET_SYSTEMD_DIR:-/lib/systemd/system}
  local systemctl=${PROPHET_SYSTEMCTL:-systemctl}
  command -v "$systemctl" >/dev/null 2>&1 || die "$systemctl not found: this installer needs systemd"
  install -d -m 0755 "$dir"
  cat >"$TMP/$SERVICE.service" <<EOF
[Unit]
Description=Prophet network collector
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=root
ExecStart=$ROOT/bin/prophet --prophet-dir $ROOT/state
Restart=always
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
  install -m 0644 "$TMP/$SERVICE.service" "$dir/$SERVICE.service"
  "$systemctl" daemon-reload
  "$systemctl" enable --now "$SERVICE"
  if [ "$upgrade" = true ]; then "$systemctl" restart "$SERVICE"; fi
}

install_launchd() {
  local dir=${PROPHET_LAUNCHD_DIR:-/Library/LaunchDaemons}
  local launchctl=${PROPHET_LAUNCHCTL:-launchctl}
  local plist=$dir/$LAUNCHD_LABEL.plist
  command -v "$launchctl" >/dev/null 2>&1 || die "$launchctl not found"
  install -d -m 0755 "$dir" "$ROOT/logs"
  cat >"$TMP/$LAUNCHD_LABEL.plist" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>$LAUNCHD_LABEL</string>
  <key>ProgramArguments</key>
  <array>
    <string>$ROOT/bin/prophet</string>
    <string>--prophet-dir</string>
    <string>$ROOT/state</string>
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <true/>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>StandardOutPath</key>
  <string>$ROOT/logs/prophet.log</string>
  <key>StandardErrorPath</key>
  <string>$ROOT/logs/prophet.log</string>
</dict>
</plist>
EOF
  install -m 0644 "$TMP/$LAUNCHD_LABEL.plist" "$plist"
  # Unloading first makes a re-install pick up the new binary and plist.
  "$launchctl" bootout "system/$LAUNCHD_LABEL" >/dev/null 2>&1 || true
  "$launchctl" enable "system/$LAUNCHD_LABEL"
  "$launchctl" bootstrap system "$plist"
}

if [ "$OS" = linux ]; then install_systemd; else install_launchd; fi
say "installed the collector into $ROOT and started the $SERVICE service"
