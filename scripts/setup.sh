#!/usr/bin/env bash
# One-time (idempotent) machine + dependency setup. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
npm install --no-audit --no-fund
