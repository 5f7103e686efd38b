#!/usr/bin/env bash
# The main job: install dependencies, build, and run `proxima distance` (built-in examples when no
# arguments are given; otherwise the arguments are passed to `proxima distance`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh >&2
exec ./build/apps/proxima/proxima distance "$@"
