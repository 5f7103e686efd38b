#!/usr/bin/env bash
# Alternating rounds on a shared, noisy machine: each round times proxima's settled polyhedra10k bed
# (one thread), an optional baseline build on its own checkpoint of the same bed, and LIGGGHTS's
# spheres10k scene, back to back; then prints every run and, per code, the best and the median rate
# with the ratios of bests and of medians (a host that slows down for a while slows whichever run it
# hits; the best of several runs is the least disturbed).
# Usage: bench/sim/alternate_rounds.sh CK OUT ROUNDS [BASELINE_BENCH BASELINE_CK]
#   CK: a folder holding polyhedra10k.ck (proxima_bench_dem --settled), OUT: a folder for the JSON.
#   Environment: BENCH=path (this build's proxima_bench_dem, default build-bench's); NO_LIGGGHTS=1
#   leaves LIGGGHTS out (an A/B of two builds only: with another build folder as BENCH and the
#   Release build as the baseline, e.g. to try compiler flags).
set -euo pipefail
cd "$(dirname "$0")/../.."
CK=$1
OUT=$2
ROUNDS=${3:-3}
BASE=${4:-}
BASE_CK=${5:-}
B=${BENCH:-build-bench/bench/proxima_bench_dem}
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  "$B" bench/sim/scenes/polyhedra10k.yaml --timed-steps 300 --threads 1 --settled "$CK/polyhedra10k.ck" \
    --out "$OUT/proxima_r$r.json" >/dev/null
  if [ -n "$BASE" ]; then
    "$BASE" bench/sim/scenes/polyhedra10k.yaml --timed-steps 300 --threads 1 --settled "$BASE_CK/polyhedra10k.ck" \
      --out "$OUT/baseline_r$r.json" >/dev/null
  fi
  if [ -z "${NO_LIGGGHTS:-}" ]; then
    python3 bench/sim/run_peers.py --scene spheres10k --peers liggghts --out "$OUT/liggghts_r$r.json" >/dev/null
  fi
done
python3 - "$OUT" <<'PY'
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
rates = {}
for f in sorted(out.glob("*_r*.json")):
    code = f.name.split("_r")[0]
    r = json.load(open(f))["results"][0]
    rate = r["particle_steps_per_s"]
    share = r.get("cpu_share", r.get("timed_cpu_share", float("nan")))
    rates.setdefault(code, []).append(rate)
    print(f"{f.name:22s} {rate / 1e6:7.3f} M/s  CPU share {share:.3f}")
summary = {c: (max(v), statistics.median(v)) for c, v in rates.items()}
for c, (best, med) in summary.items():
    print(f"{c:10s} best {best / 1e6:7.3f} M/s  median {med / 1e6:7.3f} M/s  ({len(rates[c])} runs)")
if "liggghts" in summary:
    for c in ("proxima", "baseline"):
        if c in summary:
            print(f"{c} / liggghts: best {summary[c][0] / summary['liggghts'][0]:.3f}x  "
                  f"median {summary[c][1] / summary['liggghts'][1]:.3f}x")
if "proxima" in summary and "baseline" in summary:
    print(f"proxima / baseline: best {summary['proxima'][0] / summary['baseline'][0]:.3f}x  "
          f"median {summary['proxima'][1] / summary['baseline'][1]:.3f}x")
PY
