#!/usr/bin/env bash
# Installs what the tests need from Debian: PostgreSQL's server programs (the tests start a
# throwaway cluster of their own, test/kit/throwaway-postgres.ts, and leave the machine's alone;
# TEST_DATABASE_URL skips it), Chromium for the browser tests, shellcheck for the collector
# scripts, tcpdump and ping for the packet meter's captures, the lab's attack tools. Idempotent;
# CI starts from a machine with none of them running.
set -euo pipefail

missing=()
if [ -z "${TEST_DATABASE_URL:-}" ] && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then missing+=(postgresql); fi
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
# The packet meter's tests capture their own loopback traffic (tcpdump; the fragment test uses a
# namespace), and its payload inspectors and the collector's --pcap test read bytes these tools
# send on loopback (dnsmasq-base: the binary without the system service); the flow-export
# decoder reads softflowd's exports of such captures, with nfdump as a second reader, and
# `collector run --ipfix-listen` receives softflowd's, pmacctd's (pmacct) and fprobe's exports.
# Live capture tests run the collector as user nobody through setpriv (util-linux).
command -v tcpdump >/dev/null 2>&1 || missing+=(tcpdump)
command -v ping >/dev/null 2>&1 || missing+=(iputils-ping)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v dig >/dev/null 2>&1 || missing+=(dnsutils)
command -v dnsmasq >/dev/null 2>&1 || missing+=(dnsmasq-base)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
command -v softflowd >/dev/null 2>&1 || missing+=(softflowd)
command -v nfcapd >/dev/null 2>&1 || missing+=(nfdump)
command -v pmacctd >/dev/null 2>&1 || missing+=(pmacct)
command -v fprobe >/dev/null 2>&1 || missing+=(fprobe)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
# The lab (tools/lab, docs/lab.md) plays attacks with these, inside network namespaces it creates.
command -v nmap >/dev/null 2>&1 || missing+=(nmap)
command -v hydra >/dev/null 2>&1 || missing+=(hydra)
[ -x /usr/sbin/iodined ] || missing+=(iodine)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
if [ ${#missing[@]} -gt 0 ]; then
  echo "ensure-test-tools: installing ${missing[*]}" >&2
  # Packages such as fprobe, pmacct or nginx ship services their install would start (capturing
  # this machine's interfaces, listening on its ports): tests start their own, inside namespaces.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >&2
fi

