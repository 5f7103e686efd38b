#!/usr/bin/env bash
# The main job: install dependencies, build, and run a DEM simulation with `proxima run` — with no
# arguments, the built-in default packing study (2000 faceted grains under a lid, Montanari ch. 5;
# output in proxima-out/default/) followed by `proxima report` (plots and summary in
# proxima-out/default/report/).
# With arguments, the first may name the subcommand (`run`, `distance`, `contact` or `report`; default run)
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
  "$exe" run
  exec "$exe" report proxima-out/default -o proxima-out/default/report --label "default: 2000 rock grains"
fi
case "$1" in
  run|distance|contact|report) exec "$exe" "$@" ;;
  *) exec "$exe" run "$@" ;;
esac
