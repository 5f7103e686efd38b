#!/usr/bin/env bash
# One command for the benchmark suite:
#   (a) installs the build dependencies with apt-get if any is missing,
#   (b) configures a Release build in build-bench/ and builds proxima_bench + proxima_bench_accuracy
#       (distance) and proxima_bench_contact (penetration),
#   (c) runs them with JSON output (into build-bench/bench-results/),
#   (d) writes docs/benchmarks.md with bench/report.py (distance part + "Penetration" section).
#
# Usage: scripts/bench.sh                      # both suites
#        SUITES=contact scripts/bench.sh       # penetration only: the distance part of the doc is kept
#        SUITES=distance scripts/bench.sh      # distance only: the Penetration section is kept
# Environment knobs (all optional):
#   SUITES="distance contact"   which suites to run
#   JOBS=2            parallel build jobs
#   REPETITIONS=3     Google Benchmark repetitions (medians are reported)
#   MIN_TIME=0.05     minimum time per repetition, seconds (PROXIMA_BENCH_MIN_TIME)
#   FILTER=regex      --benchmark_filter of the distance suite (default: everything)
#   CONTACT_FILTER=regex  --benchmark_filter of the penetration suite (default: everything)
#   ORACLE_MAX_N=642  largest icosphere checked against the SAT oracle (PROXIMA_BENCH_ORACLE_MAX_N)
#   TRIALS=100        trials per cell of the pole accuracy check
#   SKIP_DEPS=1       do not check/install apt packages
#   BUILD_DIR=build-bench
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-2}"
REPETITIONS="${REPETITIONS:-3}"
MIN_TIME="${MIN_TIME:-0.05}"
FILTER="${FILTER:-}"
TRIALS="${TRIALS:-100}"
SUITES="${SUITES:-distance contact}"
CONTACT_FILTER="${CONTACT_FILTER:-}"
ORACLE_MAX_N="${ORACLE_MAX_N:-642}"
has_suite() { [[ " $SUITES " == *" $1 "* ]]; }
BUILD_DIR="${BUILD_DIR:-build-bench}"
OUT_DIR="$BUILD_DIR/bench-results"
START=$SECONDS

log() { printf '[bench.sh] %s\n' "$*" >&2; }

# ---- (a) dependencies -------------------------------------------------------------------------
PACKAGES=(cmake ninja-build g++ libeigen3-dev libqhull-dev libgmp-dev nlohmann-json3-dev libcli11-dev
          libgtest-dev libbenchmark-dev libccd-dev libfcl-dev libbullet-dev)
if [[ "${SKIP_DEPS:-0}" != 1 ]]; then
  missing=()
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
  done
  if ((${#missing[@]})); then
    log "installing missing packages: ${missing[*]}"
    SUDO=""
    if [[ $(id -u) -ne 0 ]]; then
      command -v sudo >/dev/null || { log "not root and no sudo: install ${missing[*]} yourself"; exit 1; }
      SUDO=sudo
    fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
  else
    log "all build dependencies present"
  fi
fi

# ---- (b) configure and build ------------------------------------------------------------------
log "configuring $BUILD_DIR (Release)"
mkdir -p "$BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROXIMA_BUILD_TESTS=OFF -DPROXIMA_BUILD_BENCH=ON \
  -DPROXIMA_BENCH_PEERS=ON >"$BUILD_DIR/configure.log" 2>&1 || { cat "$BUILD_DIR/configure.log"; exit 1; }
grep -E "proxima benchmarks" "$BUILD_DIR/configure.log" >&2 || true
targets=()
has_suite distance && targets+=(proxima_bench proxima_bench_accuracy)
has_suite contact && targets+=(proxima_bench_contact)
((${#targets[@]})) || { log "SUITES must name distance and/or contact"; exit 1; }
log "building ${targets[*]} (-j$JOBS)"
cmake --build "$BUILD_DIR" -j"$JOBS" --target "${targets[@]}"
BUILT=$SECONDS

# ---- (c) run ----------------------------------------------------------------------------------
mkdir -p "$OUT_DIR"
ACC_SECONDS=0 BENCH_SECONDS=0 LOAD_BEFORE='?' LOAD_AFTER='?'
if has_suite distance; then
  log "pole accuracy check"
  T0=$SECONDS
  "$BUILD_DIR/bench/proxima_bench_accuracy" --trials "$TRIALS" --out "$OUT_DIR/accuracy.json" >"$OUT_DIR/accuracy.txt"
  ACC_SECONDS=$((SECONDS - T0))

  log "distance timing suite: $REPETITIONS repetition(s), min time $MIN_TIME s (takes a few minutes)"
  args=(--benchmark_format=json --benchmark_out="$OUT_DIR/bench.json" --benchmark_out_format=json
        --benchmark_repetitions="$REPETITIONS" --benchmark_report_aggregates_only=true)
  [[ -n "$FILTER" ]] && args+=(--benchmark_filter="$FILTER")
  LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
  T0=$SECONDS
  PROXIMA_BENCH_MIN_TIME="$MIN_TIME" "$BUILD_DIR/bench/proxima_bench" "${args[@]}" >"$OUT_DIR/bench.stdout.json" \
    2>"$OUT_DIR/bench.stderr.log" || { cat "$OUT_DIR/bench.stderr.log" >&2; exit 1; }
  BENCH_SECONDS=$((SECONDS - T0))
  LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
fi

CONTACT_SECONDS=0 CONTACT_CMD="" CLOAD_BEFORE='?' CLOAD_AFTER='?'
if has_suite contact; then
  log "penetration suite: $REPETITIONS repetition(s), min time $MIN_TIME s (a few minutes, much of it the SAT oracle)"
  cargs=(--benchmark_format=json --benchmark_out="$OUT_DIR/contact.json" --benchmark_out_format=json
         --benchmark_repetitions="$REPETITIONS" --benchmark_report_aggregates_only=true)
  [[ -n "$CONTACT_FILTER" ]] && cargs+=(--benchmark_filter="$CONTACT_FILTER")
  CONTACT_CMD="PROXIMA_BENCH_MIN_TIME=$MIN_TIME PROXIMA_BENCH_ORACLE_MAX_N=$ORACLE_MAX_N $BUILD_DIR/bench/proxima_bench_contact ${cargs[*]}"
  CLOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
  T0=$SECONDS
  PROXIMA_BENCH_MIN_TIME="$MIN_TIME" PROXIMA_BENCH_ORACLE_MAX_N="$ORACLE_MAX_N" \
    "$BUILD_DIR/bench/proxima_bench_contact" "${cargs[@]}" >"$OUT_DIR/contact.stdout.json" \
    2>"$OUT_DIR/contact.stderr.log" || { cat "$OUT_DIR/contact.stderr.log" >&2; exit 1; }
  CONTACT_SECONDS=$((SECONDS - T0))
  CLOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
fi

# ---- (d) report -------------------------------------------------------------------------------
CXX_BIN="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")"
CPU_MODEL="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)"
export META_CPU="${CPU_MODEL:-unknown}"
export META_NPROC="$(nproc)"
export META_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')"
export META_COMPILER="$("${CXX_BIN:-c++}" --version | head -n1) (${CXX_BIN:-c++})"
export META_BUILD_TYPE="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")"
export META_PACKAGES="$(dpkg-query -W -f='${Package} ${Version}, ' libfcl-dev libccd-dev libbullet-dev libbenchmark-dev \
  libeigen3-dev libqhull-dev 2>/dev/null | sed 's/, $//')"
export META_BENCH_SECONDS="$BENCH_SECONDS" META_ACC_SECONDS="$ACC_SECONDS" META_BUILD_SECONDS="$((BUILT - START))"
export META_TOTAL_SECONDS="$((SECONDS - START))"
export META_LOAD="before the timing run: $LOAD_BEFORE; after: $LOAD_AFTER"
export META_GIT="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
export META_CONTACT_SECONDS="$CONTACT_SECONDS" META_CONTACT_CMD="$CONTACT_CMD"
export META_CONTACT_LOAD="before the penetration run: $CLOAD_BEFORE; after: $CLOAD_AFTER"
export META_SCRIPT="SUITES=\"$SUITES\" scripts/bench.sh"
# Each suite's metadata file is written only when that suite ran.
mpath="$OUT_DIR/meta.json" cpath="$OUT_DIR/contact_meta.json"
has_suite distance || mpath=/dev/null
has_suite contact || cpath=/dev/null
python3 - "$mpath" "$cpath" <<'EOF'
import json, os, sys
e = os.environ
common = {
    "cpu": e["META_CPU"], "nproc": e["META_NPROC"], "date": e["META_DATE"], "compiler": e["META_COMPILER"],
    "build_type": e["META_BUILD_TYPE"], "packages": e["META_PACKAGES"], "git": e["META_GIT"],
}
meta = dict(common, bench_seconds=e["META_BENCH_SECONDS"], accuracy_seconds=e["META_ACC_SECONDS"],
            build_seconds=e["META_BUILD_SECONDS"], total_seconds=e["META_TOTAL_SECONDS"], loadavg=e["META_LOAD"])
cmeta = dict(common, seconds=e["META_CONTACT_SECONDS"], command=e["META_CONTACT_CMD"],
             loadavg=e["META_CONTACT_LOAD"], script=e["META_SCRIPT"])
with open(sys.argv[1], "w") as f:
    json.dump(meta, f, indent=2)
with open(sys.argv[2], "w") as f:
    json.dump(cmeta, f, indent=2)
EOF
mkdir -p docs
rargs=()
has_suite distance && rargs+=(--bench "$OUT_DIR/bench.json" --accuracy "$OUT_DIR/accuracy.json" --meta "$OUT_DIR/meta.json")
has_suite contact && rargs+=(--contact "$OUT_DIR/contact.json" --contact-meta "$OUT_DIR/contact_meta.json")
python3 bench/report.py "${rargs[@]}" --out docs/benchmarks.md
log "wrote docs/benchmarks.md (raw results in $OUT_DIR/); total $((SECONDS - START)) s" \
    "(build $((BUILT - START)) s, accuracy $ACC_SECONDS s, distance timing $BENCH_SECONDS s," \
    "penetration $CONTACT_SECONDS s)"
