#!/usr/bin/env bash
# Installs the built proxima into a temporary prefix and builds/runs tests/consumer against it.
set -euo pipefail
src="$1"; bin="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$bin" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
