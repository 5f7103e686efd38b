#!/usr/bin/env bash
# The main job: install dependencies, build, and run a DEM simulation with `proxima run` — the
# built-in default scenario when no arguments are given (output in proxima-out/default/).
# With arguments, the first may name the subcommand (`run`, `distance` or `contact`; default run)
# and the rest are passed to it, e.g.
#   scripts/run.sh examples/scenarios/pour_spheres.yaml
#   scripts/run.sh run SCENARIO.yaml --resume
#   scripts/run.sh contact --batch pairs.jsonl --method nezami
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh >&2
exe=./build/apps/proxima/proxima
if [ $# -eq 0 ]; then
  exec "$exe" run
fi
case "$1" in
  run|distance|contact) exec "$exe" "$@" ;;
  *) exec "$exe" run "$@" ;;
esac
