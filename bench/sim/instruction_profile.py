#!/usr/bin/env python3
"""Instructions per particle-step and per narrow-phase call of a settled DEM bed, by function.

Runs proxima_bench_dem twice under valgrind's callgrind on the same settled checkpoint, with T and
T + STEPS timed steps, and reports the difference: the setup (loading the checkpoint, the profiled
steps the benchmark runs first) cancels, leaving STEPS steady steps. Instruction counts do not
depend on the machine's load, so they compare two builds where wall-clock A/Bs on a shared machine
drown in noise (they are not times: a change can add instructions and still run faster, or the
reverse).

Usage (a Release build with debug information gives function and line names):
  cmake -S . -B build-prof -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-g
  cmake --build build-prof -j2 --target proxima_bench_dem
  build-prof/bench/proxima_bench_dem bench/sim/scenes/polyhedra10k.yaml --timed-steps 1 --settled CK  # settles once, keeps CK
  python3 bench/sim/instruction_profile.py --bench build-prof/bench/proxima_bench_dem \
      --scene bench/sim/scenes/polyhedra10k.yaml --settled CK [--steps 20] [--top 25] [--json out.json]

Each callgrind run takes ~1 min per 20 steps of the 10k polyhedra bed.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

LINE = re.compile(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S+?):(.*)")


def functions(annotated, inclusive):
    """callgrind_annotate's per-function table: {function: instructions}. A function is listed once per
    source file its code came from (inlined headers): exclusive counts are summed over them; an
    inclusive count already covers the whole function (the largest entry)."""
    table = collections.Counter()
    for line in annotated.splitlines():
        if line.startswith("--") and "Auto-annotated" in line:
            break
        m = LINE.match(line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        name = re.sub(r"\s*\[/.*\]$", "", m.group(3).strip())
        count = int(m.group(1).replace(",", ""))
        table[name] = max(table[name], count) if inclusive else table[name] + count
    return table


def run(args, steps, workdir):
    out = os.path.join(workdir, f"cg_{steps}.out")
    result = os.path.join(workdir, f"bench_{steps}.json")
    env = dict(os.environ)
    env.setdefault("GOMP_SPINCOUNT", "10000")  # (else the benchmark re-executes itself to set it)
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", args.bench, args.scene,
           "--timed-steps", str(steps), "--threads", "1", "--settled", args.settled, "--out", result]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"instruction_profile: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    total = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
    if not total:
        sys.exit("instruction_profile: no instruction total in callgrind's output")
    with open(result) as f:
        bench = json.load(f)["results"][0]
    tables = {}
    for inclusive in ("no", "yes"):
        a = subprocess.run(["callgrind_annotate", f"--inclusive={inclusive}", out], capture_output=True, text=True)
        if a.returncode != 0:
            sys.exit(f"instruction_profile: callgrind_annotate failed:\n{a.stderr[-2000:]}")
        tables[inclusive] = functions(a.stdout, inclusive == "yes")
    return int(total.group(1).replace(",", "")), bench, tables


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="proxima_bench_dem (a -g Release build)")
    ap.add_argument("--scene", required=True)
    ap.add_argument("--settled", required=True, help="settled checkpoint of the scene (proxima_bench_dem --settled)")
    ap.add_argument("--base-steps", type=int, default=10, help="timed steps of the first run (default 10)")
    ap.add_argument("--steps", type=int, default=20, help="extra timed steps of the second run (default 20)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            sys.exit(f"instruction_profile: '{tool}' not found (Debian package valgrind)")
    if args.steps < 1 or args.base_steps < 1:
        sys.exit("instruction_profile: --steps and --base-steps must be >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        t0, b0, f0 = run(args, args.base_steps, tmp)
        t1, b1, f1 = run(args, args.base_steps + args.steps, tmp)
    steps = args.steps
    particles = b1["particles"]
    # (narrow_phase_calls counts the timed steps only)
    calls = (b1["narrow_phase_calls"] - b0["narrow_phase_calls"]) / steps
    per_step = (t1 - t0) / steps
    print(f"{args.scene}: {steps} steady steps, {particles} particles, {calls:.0f} narrow-phase calls per step "
          f"({calls / particles:.2f} per particle-step)")
    print(f"instructions: {per_step / 1e6:.2f} M per step, {per_step / particles:.0f} per particle-step, "
          f"{per_step / calls:.0f} per narrow-phase call")
    report = {"scene": args.scene, "steps": steps, "particles": particles, "calls_per_step": calls,
              "instructions_per_step": per_step, "instructions_per_particle_step": per_step / particles,
              "instructions_per_call": per_step / calls, "functions": {}}
    for label, key in (("exclusive", "no"), ("inclusive", "yes")):
        rows = sorted(((f1[key][k] - f0[key].get(k, 0), k) for k in f1[key]), reverse=True)
        print(f"\n{label}: instructions per narrow-phase call (share of the step), top {args.top}")
        for v, k in rows[:args.top]:
            if v <= 0:
                break
            print(f"{v / steps / calls:9.1f}  {100 * v / (t1 - t0):5.1f} %  {k[:150]}")
        report["functions"][label] = {k: v / steps / calls for v, k in rows[:args.top] if v > 0}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
