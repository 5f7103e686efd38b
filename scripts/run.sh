#!/usr/bin/env bash
# The main job: install dependencies, build, and run the geometry demo: `proxima distance` and
# `proxima contact` on their built-in examples when no arguments are given. With arguments, the
# first may name the subcommand (`distance` or `contact`, default distance) and the rest are passed
# to it, e.g. `scripts/run.sh contact --batch pairs.jsonl --method nezami`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh >&2
exe=./build/apps/proxima/proxima
if [ $# -eq 0 ]; then
  "$exe" distance
  exec "$exe" contact
fi
case "$1" in
  distance|contact) exec "$exe" "$@" ;;
  *) exec "$exe" distance "$@" ;;
esac
