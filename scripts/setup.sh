#!/usr/bin/env bash
# Idempotent machine + dependency setup: safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
npm install --no-audit --no-fund
# The engine benchmark runs OpenCV SIFT (Debian's python3-opencv) side by side as the peer baseline.
bash lab/scripts/peer/ensure-python-opencv.sh
# The end-to-end tests drive Debian's Chromium through Playwright.
bash scripts/ensure-chromium.sh
