#!/usr/bin/env python3
"""Yade's side of a whole-simulation scene from proxima's settled state (used for polyhedra10k) (protocol: bench/peers/README.md, "Packing scene"
steps 3-4, applied to the open-box polyhedra scene). Exports the checkpoint with proxima_export_state, runs
bench/peers/yade/packing.py on it (no lid: only the five box planes) with `yade -j1 -f2 -n -x` under
/usr/bin/time -v, and writes a record shaped like bench/sim/results/peers-measured.json's entries.

  build-bench/bench/proxima_bench_dem bench/sim/scenes/polyhedra10k.yaml --timed-steps 2000 --threads 1 \
      --settled /tmp/poly10k/poly10k.ckpt --out proxima_polyhedra10k.json     # settles once (~20 min)
  python3 bench/sim/run_yade_from_state.py --build build-bench --ckpt /tmp/poly10k/poly10k.ckpt \
      --workdir /tmp/poly10k/yade --out yade_polyhedra10k.json --timed-steps 100 --wall-cap 540
"""
import argparse
import datetime
import json
import os
import platform
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "sim"))
import run_peers as RP  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--ckpt", required=True)
ap.add_argument("--scene", default="bench/sim/scenes/polyhedra10k.yaml")
ap.add_argument("--workdir", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--timed-steps", type=int, default=100)
ap.add_argument("--wall-cap", type=float, default=540.0)
ap.add_argument("--warmup-steps", type=int, default=1)
ap.add_argument("--timeout", type=float, default=3600.0)
A = ap.parse_args()

os.makedirs(A.workdir, exist_ok=True)
state = os.path.join(A.workdir, "state.json")
result = os.path.join(A.workdir, "result.json")
export = [os.path.join(A.build, "bench", "proxima_export_state"), A.scene, "--checkpoint", A.ckpt, "--out", state]
rc, _, text, _, _, _ = RP.run_cmd(export, ROOT, 600, dict(os.environ))
if rc != 0:
    sys.exit("export failed:\n" + text[-3000:])
if os.path.exists(result):
    os.remove(result)

exe = RP.find_exe("yade")
script = os.path.join(ROOT, "bench", "peers", "yade", "packing.py")
cmd = [exe, "-j", "1", "-f2", "-n", "-x", script, state, result, "--timed-steps", str(A.timed_steps),
       "--wall-cap", repr(A.wall_cap), "--warmup-steps", str(A.warmup_steps)]
env = dict(os.environ, OMP_NUM_THREADS="1")
started = datetime.datetime.now().isoformat(timespec="seconds")
load0 = os.getloadavg()
rcy, wall, text, peak, cpu_pct, _ = RP.run_cmd(["nice", "-n", "5"] + cmd, A.workdir, A.timeout, env)
res = json.load(open(result)) if os.path.exists(result) else None
with open(state) as f:
    S = json.load(f)
status = "timeout" if rcy is None else "failed" if (rcy != 0 or res is None) else \
    "exploded" if res.get("exploded") else "ok"
rec = dict(scene=os.path.splitext(os.path.basename(A.scene))[0], peer="yade", quick=False, particles=len(S["particles"]), threads=1,
           shape="polyhedron", box=S["container"]["max"], settle_time=None, timed_steps_target=A.timed_steps,
           dt=S["time_step"], package_version=RP.dpkg_version("yade"), started=started,
           command=" ".join(cmd), export_command=" ".join(export), wall_seconds_total=wall, peak_rss_mb=peak,
           version=RP.banner_version("yade", text), cpu_percent=cpu_pct, status=status,
           loadavg_before=list(load0), loadavg_after=list(os.getloadavg()),
           start_state=("proxima's settled checkpoint (0.5 s, 29412 steps, 1 thread) exported by proxima_export_state; "
                        "Yade times steps from it after %d untimed warm-up step(s), capped at %g s of timed wall time"
                        % (A.warmup_steps, A.wall_cap)),
           script="bench/peers/yade/packing.py (no lid: the five box planes only)")
if res:
    rec.update(res)
    rec["vmax_start"] = res["start"]["vmax"]
    rec["vmax_end"] = res["end"]["vmax"]
    rec["ke_start"] = res["start"]["ke"]
    rec["ke_end"] = res["end"]["ke"]
    rec["settled"] = res["start"]["vmax"] < 0.05
    rec["contended"] = (res.get("timed_cpu_share") or 0) < 0.9
if status != "ok":
    rec["output_tail"] = text[-3000:]
    rec["returncode"] = rcy
doc = dict(machine=dict(cpu=RP.cpu_model(), cores=os.cpu_count(), platform=platform.platform()),
           protocol="bench/peers/README.md", results=[rec])
with open(A.out, "w") as f:
    json.dump(doc, f, indent=1)
print(json.dumps({k: rec.get(k) for k in ("status", "steps", "seconds", "cpu_seconds", "particle_steps_per_s",
                                          "particle_steps_per_cpu_s", "timed_cpu_share", "capped", "peak_rss_mb",
                                          "warmup_seconds", "vmax_start", "vmax_end")}, indent=1))
