#!/usr/bin/env bash
# Two-thread scaling on a shared, noisy machine: each round times a settled bed with one thread and
# with two, back to back (and the same for an optional baseline build), so that a slow spell of the
# host hits both thread counts of a round alike. Prints every run, the best and median rates, and
# the two-thread / one-thread ratio per round (the figure the DEM issue's 1.7x target is about).
# Usage: bench/sim/thread_rounds.sh CK OUT ROUNDS [SCENE] [BASELINE_BENCH BASELINE_CK]
#   CK: a folder holding SCENE.ck (proxima_bench_dem --settled); SCENE defaults to polyhedra10k;
#   STEPS (environment, default 300): timed steps per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
CK=$1
OUT=$2
ROUNDS=${3:-3}
SCENE=${4:-polyhedra10k}
BASE=${5:-}
BASE_CK=${6:-}
B=build-bench/bench/proxima_bench_dem
mkdir -p "$OUT"
run() {  # code bench ck threads round
  "$2" "bench/sim/scenes/$SCENE.yaml" --timed-steps "${STEPS:-300}" --threads "$4" --settled "$3/$SCENE.ck" \
    --out "$OUT/$1_t$4_r$5.json" >/dev/null 2>>"$OUT/runs.log"
}
for r in $(seq 1 "$ROUNDS"); do
  for t in 1 2; do
    run proxima "$B" "$CK" "$t" "$r"
    if [ -n "$BASE" ]; then run baseline "$BASE" "$BASE_CK" "$t" "$r"; fi
  done
done
python3 - "$OUT" <<'PY'
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
rates = {}
for f in sorted(out.glob("*_t?_r*.json")):
    code, threads, rnd = f.stem.rsplit("_", 2)
    r = json.load(open(f))["results"][0]
    rates.setdefault((code, threads), {})[int(rnd[1:])] = r["particle_steps_per_s"]
for (code, threads), runs in sorted(rates.items()):
    v = [runs[k] for k in sorted(runs)]
    print(f"{code:9s} {threads}: " + " ".join(f"{x / 1e6:.3f}" for x in v) +
          f"  best {max(v) / 1e6:.3f} M/s  median {statistics.median(v) / 1e6:.3f} M/s")
for code in sorted({c for c, _ in rates}):
    one, two = rates.get((code, "t1"), {}), rates.get((code, "t2"), {})
    rounds = sorted(set(one) & set(two))
    if not rounds:
        continue
    ratios = [two[k] / one[k] for k in rounds]
    print(f"{code:9s} two / one thread per round: " + " ".join(f"{x:.2f}" for x in ratios) +
          f"  median {statistics.median(ratios):.2f}x  min {min(ratios):.2f}x")
PY
