#!/usr/bin/env bash
# Makes Debian's Chromium available for the Playwright end-to-end tests.
# Playwright's own browser download cannot work on these machines (closed network),
# so the e2e config launches /usr/bin/chromium instead.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq chromium; } >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
/usr/bin/chromium --version
