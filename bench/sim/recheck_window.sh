#!/bin/bash
# One interleaved re-check window of the whole-simulation targets (docs/benchmarks.md, "Re-check"
# paragraphs): proxima polyhedra10k, LIGGGHTS 10k spheres, proxima polyhedra10k again, polyhedra1k,
# spheres10k, LIGGGHTS again. Interleaving puts the peer and proxima in the same minutes of a shared
# machine; the ratio is taken within the window.
#
# Usage: bench/sim/recheck_window.sh CHECKPOINT_DIR OUT_DIR [WINDOW_NAME] [BASELINE_BENCH BASELINE_CHECKPOINT_DIR]
#   CHECKPOINT_DIR holds polyhedra10k.ck, polyhedra1k.ck and spheres10k.ck, settled by this build
#   (proxima_bench_dem SCENE --settled DIR/NAME.ck makes them; a checkpoint of another layout is
#   refused, so a build that changes the layout needs its own). With a baseline build and its own
#   checkpoints of the same beds, its polyhedra10k runs come right after each of this build's
#   (a same-window A/B). Needs build-bench/bench/proxima_bench_dem (Release) and LIGGGHTS.
set -euo pipefail
cd "$(dirname "$0")/../.."
CK=$1
OUT=$2
W=${3:-w1}
BASE=${4:-}
BASE_CK=${5:-}
B=build-bench/bench/proxima_bench_dem
mkdir -p "$OUT"
poly10k() {  # $1 bench, $2 checkpoint dir, $3 file name
  "$1" bench/sim/scenes/polyhedra10k.yaml --timed-steps 500 --threads 1,2 --settled "$2/polyhedra10k.ck" --out "$OUT/$3"
}
poly10k "$B" "$CK" "proxima_polyhedra10k_$W.json"
[ -n "$BASE" ] && poly10k "$BASE" "$BASE_CK" "baseline_polyhedra10k_$W.json"
python3 bench/sim/run_peers.py --scene spheres10k --peers liggghts --out "$OUT/liggghts_1_$W.json"
poly10k "$B" "$CK" "proxima_polyhedra10k_run2_$W.json"
[ -n "$BASE" ] && poly10k "$BASE" "$BASE_CK" "baseline_polyhedra10k_run2_$W.json"
"$B" bench/sim/scenes/polyhedra1k.yaml --timed-steps 2000 --threads 1,2 --settled "$CK/polyhedra1k.ck" \
  --out "$OUT/proxima_polyhedra1k_$W.json"
"$B" bench/sim/scenes/spheres10k.yaml --timed-steps 5000 --threads 1,2 --settled "$CK/spheres10k.ck" \
  --out "$OUT/proxima_spheres10k_$W.json"
python3 bench/sim/run_peers.py --scene spheres10k --peers liggghts --out "$OUT/liggghts_2_$W.json"
# One line per run: scene, threads, particle-steps/s, CPU share.
python3 - "$OUT" "$W" <<'PY'
import json, pathlib, sys
out, w = pathlib.Path(sys.argv[1]), sys.argv[2]
for f in sorted(out.glob(f"*_{w}.json")):
    for r in json.load(open(f))["results"]:
        print(f"{f.name:45s} threads {r.get('threads', 1)}  {r['particle_steps_per_s'] / 1e6:7.3f} M/s  "
              f"CPU share {r.get('cpu_share', r.get('timed_cpu_share', float('nan'))):.3f}")
PY
