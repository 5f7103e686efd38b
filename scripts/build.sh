#!/usr/bin/env bash
# Configures and builds proxima (Release) in build/. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROXIMA_BUILD_BENCH=OFF "$@" >/dev/null
cmake --build build -j"${PROXIMA_JOBS:-2}"
