#!/usr/bin/env bash
# Installs dependencies, builds, and runs the default test suite (everything but the `long` label).
# `scripts/test.sh --long` runs the labelled long runs instead (the distance fuzz with 1e5 pairs per
# family, the penetration oracle with 30 000 pairs in each of 5 families, the 2000-sphere DEM pour).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh -DPROXIMA_BUILD_TESTS=ON
label=(-LE long)
if [[ "${1:-}" == "--long" ]]; then label=(-L long); fi
# --no-tests=error: a run that finds no test fails instead of passing silently.
ctest --test-dir build "${label[@]}" --output-on-failure --no-tests=error -j2 --timeout 1800
