#!/usr/bin/env bash
# Makes Debian's python3 able to `import cv2` for the SIFT peer baseline.
# Uses the Debian package rather than pip: the default python3 on PATH is a
# pyenv build without cv2, and apt gives a prebuilt, version-matched OpenCV.
set -euo pipefail

PYTHON=/usr/bin/python3

if "$PYTHON" -c 'import cv2' >/dev/null 2>&1; then
  exit 0
fi

# apt chatter (debconf notices etc.) is only worth seeing when something fails.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq python3-opencv; } >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi

"$PYTHON" -c 'import cv2'
