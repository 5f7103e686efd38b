#!/usr/bin/env python3
"""Packing scene of the whole-simulation benchmark (Montanari thesis ch. 5 grain packing): 1200 convex
rock grains in a box under a free lid at coarse, medium and fine mesh resolution (24, 78, 160 vertices),
proxima against Yade's Polyhedra module from the SAME state, plus the narrow-phase cost against the
vertex count. The protocol is in bench/peers/README.md, "Packing scene".

  nice -n 10 python3 bench/sim/run_packing.py                      # full run, writes
                                                                   # bench/sim/results/packing-measured.json
  python3 bench/sim/run_packing.py --quick --out /tmp/packing-quick.json   # smoke test, a few minutes
  python3 bench/sim/packing_table.py bench/sim/results/packing-measured.json   # Markdown tables

Per resolution (examples/packing/rocks_1200_coarse.yaml, rocks_1200.yaml, rocks_1200_fine.yaml):
  (a) the compacting-phase state: `proxima run SCENE --duration 0.25 --no-vtk -q -o WORKDIR/RES`
      (grains and lid still falling and compacting, many contacts); reused when WORKDIR/RES holds a
      checkpoint at that time;
  (b) proxima timed from it: `proxima_bench_dem SCENE --settled WORKDIR/RES/checkpoint.bin
      --timed-steps N --threads 1,2 --repeat R` (CPU seconds, contact-detection share, narrow-phase
      calls saved by the conservative bound);
  (c) the same state exported (`proxima_export_state SCENE --checkpoint ... --out state.json`) and run by
      Yade (bench/peers/yade/packing.py, `yade -j1 -f2 -n -x`) for N steps under a wall-clock cap; Yade
      missing -> "unavailable" (bench/peers/install.sh installs it).
  The ratio is proxima (1 thread) / Yade in particle-steps per CPU second (the machine is shared).
Vertex-count scaling: a copy of examples/packing/rocks_100.yaml's layout scaled to `--scaling-count`
grains (box edge x (count/100)^(1/3), the lid the same 15 mm steel plate over the larger footprint)
with `vertices: K` instead of `resolution`, K in 24, 78, 160, 400, 1000; each run to 0.25 s, then timed
on one thread; narrow-phase microseconds per call (narrow_phase_cpu_seconds / narrow_phase_calls) and
particle-steps per CPU second against the hull vertex count, and the exponent a of time per call ~ K^a
(least squares in log-log).

stdlib only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import run_peers as RP  # noqa: E402  (run_cmd, cpu_model, dpkg_version, banner_version)

RESOLUTIONS = [("coarse", "examples/packing/rocks_1200_coarse.yaml", 24),
               ("medium", "examples/packing/rocks_1200.yaml", 78),
               ("fine", "examples/packing/rocks_1200_fine.yaml", 160)]
SCALING_TEMPLATE = "examples/packing/rocks_100.yaml"
VERTEX_COUNTS = [24, 78, 160, 400, 1000]


def log(msg):
    print("[run_packing] " + msg, file=sys.stderr, flush=True)


def rel(path):
    """Path relative to the repository root when inside it (for the recorded command lines)."""
    p = os.path.abspath(path)
    return os.path.relpath(p, ROOT) if p.startswith(ROOT + os.sep) else p


def cmdline(cmd):
    return " ".join(shlex.quote(rel(c) if os.path.exists(c) else c) for c in cmd)


def find_build(explicit):
    names = ("apps/proxima/proxima", "bench/proxima_bench_dem", "bench/proxima_export_state")
    cands = [explicit] if explicit else [os.environ.get("PROXIMA_BUILD", "")] + [
        os.path.join(ROOT, d) for d in ("build-bench2", "build-bench", "build")]
    for d in cands:
        if d and all(os.access(os.path.join(d, n), os.X_OK) for n in names):
            return os.path.abspath(d)
    sys.exit("run_packing: no build with proxima, proxima_bench_dem and proxima_export_state found (tried "
             + ", ".join(c for c in cands if c) + "); configure with -DPROXIMA_BUILD_BENCH=ON and build them, "
             "or pass --build DIR")


def run(cmd, logfile, timeout=None):
    """Runs cmd, output to logfile; returns (returncode or None on timeout, wall s, child CPU s, output)."""
    r0 = os.times()
    t0 = time.time()
    with open(logfile, "w") as out:
        try:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                timeout=timeout, cwd=ROOT).returncode
        except subprocess.TimeoutExpired:
            rc = None
    wall = time.time() - t0
    r1 = os.times()
    with open(logfile, errors="replace") as f:
        text = f.read()
    return rc, wall, (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system), text


def scaled_scene(count, resolution=None, vertices=None, name="rocks"):
    """examples/packing/rocks_100.yaml's layout scaled to `count` grains (edge x (count/100)^(1/3), lid the
    same 15 mm steel plate over the new footprint), with `resolution` or `vertices: K` for the grains."""
    with open(os.path.join(ROOT, SCALING_TEMPLATE)) as f:
        text = f.read()
    edge = round(0.026 * (count / 100.0) ** (1.0 / 3.0), 4)
    mass = round(0.0796 * (edge / 0.026) ** 2, 4)
    subs = [("count: 100", f"count: {count}"), ("0.026", repr(edge)), ("mass: 0.0796", f"mass: {mass}"),
            ("resolution: medium", f"resolution: {resolution}" if resolution else f"vertices: {vertices}"),
            ("proxima-out/rocks_100", f"proxima-out/{name}")]
    for old, new in subs:
        if old not in text:
            raise RuntimeError(f"{SCALING_TEMPLATE}: expected '{old}' (the template changed; adapt scaled_scene)")
        text = text.replace(old, new)
    lines = text.splitlines()
    lines[0] = (f"# {count} rock grains, " + (f"{resolution} mesh" if resolution else f"vertices: {vertices}")
                + f" (generated by bench/sim/run_packing.py from {SCALING_TEMPLATE}: box edge {edge} m, lid {mass} kg)")
    return "\n".join(lines) + "\n", dict(edge=edge, lid_mass=mass)


def ensure_state(bins, scene, outdir, duration, threads):
    """(a) proxima run to `duration`, checkpoint in outdir/checkpoint.bin; reused if already there."""
    ck, meta = os.path.join(outdir, "checkpoint.bin"), os.path.join(outdir, "checkpoint.json")
    cmd = ["nice", "-n", "10", bins["proxima"], "run", scene, "--duration", repr(duration), "--no-vtk", "-q",
           "-o", outdir, "-j", str(threads)]
    rec = dict(command=cmdline(cmd), checkpoint=rel(ck))
    if os.path.exists(ck) and os.path.exists(meta):
        with open(meta) as f:
            m = json.load(f)
        summ = os.path.join(outdir, "summary.json")
        dt = None
        if os.path.exists(summ):
            with open(summ) as f:
                dt = json.load(f).get("time_step")
        if dt and m.get("time", 0) >= duration - 1.5 * dt:
            rec.update(reused=True, time=m["time"], step=m["step"])
            rec.update(summary_of(summ))
            log(f"reusing {rel(ck)} (t = {m['time']:.4f} s)")
            return rec
    os.makedirs(outdir, exist_ok=True)
    log(f"preparing {rel(outdir)}: {cmdline(cmd)}")
    rc, wall, cpu, text = run(cmd, os.path.join(outdir, "run.log"))
    rec.update(reused=False, wall_seconds=wall, cpu_seconds=cpu, returncode=rc)
    if rc != 0 or not os.path.exists(ck):
        rec.update(status="failed", output_tail=text[-3000:])
        return rec
    with open(meta) as f:
        m = json.load(f)
    rec.update(time=m["time"], step=m["step"])
    rec.update(summary_of(os.path.join(outdir, "summary.json")))
    log(f"  done in {wall:.0f} s wall, {cpu:.0f} s CPU")
    return rec


def summary_of(path):
    """The state at the checkpoint, from proxima's summary.json."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        s = json.load(f)
    st, pk = s.get("stats", {}), s.get("packing") or {}
    return dict(time_step=s.get("time_step"), contacts=st.get("contacts"),
                coordination_number=st.get("coordination_number", pk.get("coordination_number")),
                max_speed=st.get("max_speed"), kinetic_energy=st.get("kinetic_energy"),
                lid_height=pk.get("lid_height"), packing_fraction=pk.get("packing_fraction"),
                prep_narrow_phase_saved_fraction=s.get("narrow_phase_saved_fraction"))


def bench_proxima(bins, scene, ckpt, outdir, steps, threads, repeat):
    """(b) proxima_bench_dem from the checkpoint; per thread count, all repeats and the best one (the
    largest particle-steps per CPU second: the least disturbed on a shared machine)."""
    out = os.path.join(outdir, "proxima-bench.json")
    cmd = ["nice", "-n", "10", bins["bench"], scene, "--settled", ckpt, "--timed-steps", str(steps),
           "--threads", threads, "--repeat", str(repeat), "--out", out]
    log(f"timing proxima: {cmdline(cmd)}")
    load0 = os.getloadavg()
    rc, wall, cpu, text = run(cmd, os.path.join(outdir, "proxima-bench.log"))
    rec = dict(command=cmdline(cmd), loadavg_before=load0, loadavg_after=os.getloadavg())
    if rc != 0 or not os.path.exists(out):
        rec.update(status="failed", output_tail=text[-3000:])
        return rec
    with open(out) as f:
        runs = json.load(f)["results"]
    rec["status"] = "ok"
    keep = ("threads", "repeat", "steps", "seconds", "cpu_seconds", "cpu_share", "particle_steps_per_s",
            "narrow_phase_calls", "narrow_phase_skipped", "narrow_phase_saved_fraction", "contact_detection_share",
            "narrow_phase_cpu_seconds", "neighbour_seconds", "neighbour_rebuilds", "vertices", "peak_rss_mb",
            "vmax_start", "vmax_end", "contacts", "coordination_number", "particles")
    per = {}
    for r in runs:
        x = {k: r.get(k) for k in keep}
        n, s, c = r["particles"], r["steps"], r["cpu_seconds"]
        x["particle_steps_per_cpu_s"] = n * s / c if c > 0 else None
        calls = r.get("narrow_phase_calls") or 0
        x["narrow_phase_us_per_call"] = 1e6 * r["narrow_phase_cpu_seconds"] / calls if calls else None
        per.setdefault(str(r["threads"]), []).append(x)
    rec["runs"] = per
    rec["best"] = {t: max(rs, key=lambda x: x["particle_steps_per_cpu_s"] or 0) for t, rs in per.items()}
    first = runs[0]
    rec.update(particles=first["particles"], vertices=first.get("vertices"), contacts_start=first.get("contacts"),
               coordination_number_start=first.get("coordination_number"), vmax_start=first.get("vmax_start"))
    for t, b in rec["best"].items():
        log(f"  proxima {t} thread(s): {b['particle_steps_per_s'] / 1e3:.1f} k particle-steps/s wall, "
            f"{b['particle_steps_per_cpu_s'] / 1e3:.1f} k per CPU-s (CPU share {b['cpu_share']:.2f}), "
            f"contact detection {b['contact_detection_share']:.0%}, bound saved {b['narrow_phase_saved_fraction']:.0%}")
    return rec


def run_yade(bins, scene, ckpt, outdir, steps, cap, warmup, timeout_extra):
    """(c) export the state, run bench/peers/yade/packing.py on it. The process timeout is the cap plus
    `timeout_extra` for building the bodies and the untimed warm-up (Yade's first step on a dense
    medium-mesh state takes minutes: it computes every candidate pair's intersection from scratch)."""
    exe = RP.find_exe("yade")
    rec = dict(peer="yade", package_version=RP.dpkg_version("yade"))
    if not exe:
        rec.update(status="unavailable", note="executable not found: yade (bench/peers/install.sh installs it)")
        log("yade: unavailable")
        return rec
    ydir = os.path.join(outdir, "yade")
    os.makedirs(ydir, exist_ok=True)
    state, result = os.path.join(outdir, "state.json"), os.path.join(ydir, "result.json")
    ecmd = [bins["export"], scene, "--checkpoint", ckpt, "--out", state]
    rc, _, _, text = run(ecmd, os.path.join(outdir, "export.log"))
    rec["export_command"] = cmdline(ecmd)
    if rc != 0:
        rec.update(status="failed", note="export failed", output_tail=text[-3000:])
        return rec
    if os.path.exists(result):
        os.remove(result)
    script = os.path.join(ROOT, "bench", "peers", "yade", "packing.py")
    # -f2: log errors only (polyhedra.py: Yade 2023.02a logs a warning per candidate pair and step).
    cmd = [exe, "-j", "1", "-f2", "-n", "-x", script, state, result, "--timed-steps", str(steps),
           "--wall-cap", repr(float(cap)), "--warmup-steps", str(warmup)]
    log(f"running yade: {cmdline(cmd)}")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    load0 = os.getloadavg()
    rcy, wall, text, peak, cpu_pct, _ = RP.run_cmd(["nice", "-n", "10"] + cmd, ydir, cap + timeout_extra, env)
    rec.update(command=cmdline(cmd), wall_seconds_total=wall, peak_rss_mb=peak, cpu_percent=cpu_pct,
               version=RP.banner_version("yade", text), loadavg_before=load0, loadavg_after=os.getloadavg())
    res = None
    if os.path.exists(result):
        with open(result) as f:
            res = json.load(f)
    if rcy is None:
        rec["status"] = "timeout"
    elif rcy != 0 or res is None:
        rec["status"] = "failed"
    elif res.get("exploded"):
        rec["status"] = "exploded"
    else:
        rec["status"] = "ok"
    if res:
        rec.update(res)
    else:  # killed or crashed before writing its result: what its progress lines say
        m = re.search(r"warm-up: (\d+) steps in ([0-9.]+) s; (\d+) interactions, (\d+) contacts", text)
        if m:
            rec.update(warmup_steps=int(m.group(1)), warmup_seconds=float(m.group(2)),
                       progress_contacts=int(m.group(4)))
        prog = re.findall(r"timed step (\d+)/\d+ t=\S+ s vmax=(\S+) .*?wall=([0-9.]+) s", text)
        if prog:
            rec.update(progress_timed_steps=int(prog[-1][0]), progress_timed_wall=float(prog[-1][2]),
                       progress_vmax=float(prog[-1][1]))
    if rec["status"] != "ok":
        rec["output_tail"] = text[-3000:]
        rec["returncode"] = rcy
    if rec.get("particle_steps_per_cpu_s"):
        log(f"  yade: {rec['status']}, {rec['steps']} steps, {rec['particle_steps_per_s']:.0f} particle-steps/s wall, "
            f"{rec['particle_steps_per_cpu_s']:.0f} per CPU-s" + (" (capped)" if rec.get("capped") else ""))
    else:
        log(f"  yade: {rec['status']}")
    return rec


def set_ratio(rec):
    """proxima (1 thread) / Yade, per CPU second and per wall second."""
    p1 = rec.get("proxima", {}).get("best", {}).get("1")
    y = rec.get("yade", {})
    for k in ("ratio_per_cpu_s", "ratio_wall"):
        rec.pop(k, None)
    if p1 and y.get("particle_steps_per_cpu_s") and y.get("status") in ("ok", "exploded"):
        rec["ratio_per_cpu_s"] = p1["particle_steps_per_cpu_s"] / y["particle_steps_per_cpu_s"]
        rec["ratio_wall"] = p1["particle_steps_per_s"] / y["particle_steps_per_s"]


def fit_power(xs, ys):
    """Least squares of log y = a log x + b; returns a, exp(b), r^2."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    n = len(lx)
    mx, my = sum(lx) / n, sum(ly) / n
    sxx = sum((x - mx) ** 2 for x in lx)
    sxy = sum((x - mx) * (y - my) for x, y in zip(lx, ly))
    a = sxy / sxx
    b = my - a * mx
    ss_tot = sum((y - my) ** 2 for y in ly)
    ss_res = sum((y - (a * x + b)) ** 2 for x, y in zip(lx, ly))
    return a, math.exp(b), (1 - ss_res / ss_tot) if ss_tot > 0 else 1.0


def machine_info(build):
    info = dict(cpu=RP.cpu_model(), cores=os.cpu_count(), platform=platform.platform(), loadavg=os.getloadavg())
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        with open(cache, errors="replace") as f:
            txt = f.read()
        for key in ("CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER"):
            m = re.search(rf"^{key}:[A-Z]+=(.*)$", txt, re.M)
            if m:
                info[key.lower()] = m.group(1)
    try:
        info["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                            timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="JSON output (default bench/sim/results/packing-measured.json; "
                    "with --quick WORKDIR/packing-quick.json)")
    ap.add_argument("--workdir", default="/tmp/proxima-packing", help="checkpoints, states, logs (reused)")
    ap.add_argument("--build", default=None, help="build folder with proxima, proxima_bench_dem, proxima_export_state")
    ap.add_argument("--quick", action="store_true", help="tiny counts and short phases (smoke test)")
    ap.add_argument("--timed-steps", type=int, default=None, help="timed steps, proxima and Yade (default 300; quick 20)")
    ap.add_argument("--repeat", type=int, default=None, help="proxima repeats per thread count (default 2; quick 1)")
    ap.add_argument("--threads", default="1,2", help="proxima thread counts")
    ap.add_argument("--prep-time", type=float, default=None, help="simulated time of the compacting-phase state "
                    "(default 0.25 s; quick 0.02 s)")
    ap.add_argument("--prep-threads", type=int, default=2, help="threads of the untimed proxima runs")
    ap.add_argument("--yade-cap", type=float, default=None, help="wall-clock cap of Yade's timed phase (default 300 s; quick 30 s)")
    ap.add_argument("--yade-warmup", type=int, default=1, help="untimed Yade steps before the timed phase")
    ap.add_argument("--yade-extra", type=float, default=2400.0, help="Yade process timeout = cap + this (s): "
                    "building the bodies and the warm-up")
    ap.add_argument("--merge", action="store_true", help="merge into an existing --out: replace the resolutions "
                    "and the scaling run now, keep the others (with --skip-yade, keep their earlier Yade records)")
    ap.add_argument("--skip-yade", action="store_true")
    ap.add_argument("--skip-scaling", action="store_true", help="no vertex-count scaling")
    ap.add_argument("--skip-resolutions", action="store_true", help="only the vertex-count scaling")
    ap.add_argument("--resolutions", default="coarse,medium,fine")
    ap.add_argument("--vertex-counts", default=None, help="comma-separated (default 24,78,160,400,1000; quick 24,78,160)")
    ap.add_argument("--scaling-count", type=int, default=None, help="grains of the scaling scene (default 300; quick 50)")
    a = ap.parse_args()

    q = a.quick
    steps = a.timed_steps or (20 if q else 300)
    repeat = a.repeat or (1 if q else 2)
    prep = a.prep_time or (0.02 if q else 0.25)
    cap = a.yade_cap or (30.0 if q else 300.0)
    counts = [int(x) for x in (a.vertex_counts or ("24,78,160" if q else ",".join(map(str, VERTEX_COUNTS)))).split(",")]
    scount = a.scaling_count or (50 if q else 300)
    work = os.path.abspath(a.workdir)
    os.makedirs(work, exist_ok=True)
    out = a.out or (os.path.join(work, "packing-quick.json") if q else
                    os.path.join(ROOT, "bench", "sim", "results", "packing-measured.json"))
    build = find_build(a.build)
    bins = dict(proxima=os.path.join(build, "apps/proxima/proxima"), bench=os.path.join(build, "bench/proxima_bench_dem"),
                export=os.path.join(build, "bench/proxima_export_state"))
    log(f"build {rel(build)}, workdir {work}, timed steps {steps}, repeat {repeat}, prep {prep} s, Yade cap {cap} s")

    doc = dict(protocol="bench/peers/README.md#packing-scene", quick=q,
               started=datetime.datetime.now().isoformat(timespec="seconds"), machine=machine_info(build),
               settings=dict(timed_steps=steps, repeat=repeat, threads=a.threads, prep_time=prep, prep_threads=a.prep_threads,
                             yade_wall_cap=cap, yade_warmup_steps=a.yade_warmup, yade_timeout=cap + a.yade_extra,
                             scaling_count=scount, vertex_counts=counts),
               runner_command=" ".join(shlex.quote(x) for x in ["python3", rel(__file__)] + sys.argv[1:]),
               resolutions=[], vertex_scaling=None)

    old = None
    if a.merge and os.path.exists(out):
        with open(out) as f:
            old = json.load(f)

    def save():
        doc["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
        full = doc
        if old is not None:  # --merge: the old records not re-run now, then the new ones, in resolution order
            full = dict(old)
            full["merged_runs"] = list(old.get("merged_runs", [])) + [
                {k: doc[k] for k in ("started", "finished", "runner_command", "settings", "machine")}]
            new = {r["resolution"]: r for r in doc["resolutions"]}
            recs = {r["resolution"]: r for r in old.get("resolutions", [])}
            for res_name, r in new.items():  # --skip-yade: keep the earlier Yade record of that resolution
                prev = recs.get(res_name, {}).get("yade")
                if r.get("yade", {}).get("status") == "skipped" and prev and prev.get("status") != "skipped":
                    r["yade"] = dict(prev, from_earlier_run=True)
                    set_ratio(r)
            recs.update(new)
            order = [res for res, _, _ in RESOLUTIONS]
            full["resolutions"] = sorted(recs.values(), key=lambda r: order.index(r["resolution"])
                                         if r["resolution"] in order else len(order))
            if doc.get("vertex_scaling") is not None:
                full["vertex_scaling"] = doc["vertex_scaling"]
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(full, f, indent=1)

    # ---- resolutions ----
    if not a.skip_resolutions:
        wanted = [r.strip() for r in a.resolutions.split(",") if r.strip()]
        for res, scene, nominal in RESOLUTIONS:
            if res not in wanted:
                continue
            rdir = os.path.join(work, ("quick-" if q else "") + res)
            os.makedirs(rdir, exist_ok=True)
            if q:  # a small copy of the scene at this resolution
                text, _ = scaled_scene(100, resolution=res, name=f"rocks_100_{res}")
                scene = os.path.join(rdir, f"rocks_100_{res}.yaml")
                with open(scene, "w") as f:
                    f.write(text)
            scene_abs = os.path.join(ROOT, scene) if not os.path.isabs(scene) else scene
            rec = dict(resolution=res, scene=rel(scene_abs), vertices_nominal=nominal)
            log(f"== {res}: {rel(scene_abs)}")
            rec["state"] = ensure_state(bins, scene_abs, os.path.join(rdir, "run"), prep, a.prep_threads)
            ckpt = os.path.join(rdir, "run", "checkpoint.bin")
            if rec["state"].get("status") == "failed":
                doc["resolutions"].append(rec)
                save()
                continue
            rec["proxima"] = bench_proxima(bins, scene_abs, ckpt, rdir, steps, a.threads, repeat)
            if a.skip_yade:
                rec["yade"] = dict(peer="yade", status="skipped")
            else:
                rec["yade"] = run_yade(bins, scene_abs, ckpt, rdir, steps, cap, a.yade_warmup, a.yade_extra)
            set_ratio(rec)
            if rec.get("ratio_per_cpu_s"):
                log(f"  ratio proxima/Yade per CPU second: {rec['ratio_per_cpu_s']:.0f}")
            doc["resolutions"].append(rec)
            save()

    # ---- vertex-count scaling ----
    if not a.skip_scaling:
        sdir = os.path.join(work, "quick-scaling" if q else "scaling")
        os.makedirs(sdir, exist_ok=True)
        points = []
        for k in counts:
            name = f"rocks_{scount}_v{k}"
            text, lay = scaled_scene(scount, vertices=k, name=name)
            scene = os.path.join(sdir, name + ".yaml")
            with open(scene, "w") as f:
                f.write(text)
            log(f"== scaling: {scount} grains, vertices: {k}")
            kdir = os.path.join(sdir, f"v{k}")
            pt = dict(vertices_requested=k, scene=rel(scene), layout=lay)
            pt["state"] = ensure_state(bins, scene, kdir, prep, a.prep_threads)
            if pt["state"].get("status") != "failed":
                pt["proxima"] = bench_proxima(bins, scene, os.path.join(kdir, "checkpoint.bin"), kdir, steps, "1", repeat)
                b = pt["proxima"].get("best", {}).get("1")
                if b:
                    # the best repeat by narrow-phase time per call (least disturbed)
                    runs = pt["proxima"]["runs"]["1"]
                    us = [r["narrow_phase_us_per_call"] for r in runs if r.get("narrow_phase_us_per_call")]
                    pt.update(vertices=b["vertices"], narrow_phase_us_per_call=min(us) if us else None,
                              narrow_phase_us_per_call_all=us,
                              particle_steps_per_s=b["particle_steps_per_s"],
                              particle_steps_per_cpu_s=b["particle_steps_per_cpu_s"],
                              narrow_phase_calls_per_step=b["narrow_phase_calls"] / b["steps"],
                              narrow_phase_saved_fraction=b["narrow_phase_saved_fraction"],
                              contact_detection_share=b["contact_detection_share"],
                              coordination_number_start=b.get("coordination_number"))
                    log(f"  {b['vertices']} hull vertices: {pt['narrow_phase_us_per_call']:.2f} us per narrow-phase call, "
                        f"{b['particle_steps_per_cpu_s'] / 1e3:.1f} k particle-steps per CPU-s")
            points.append(pt)
            doc["vertex_scaling"] = dict(particles=scount, template=SCALING_TEMPLATE, points=points)
            save()
        good = [p for p in points if p.get("narrow_phase_us_per_call") and p.get("vertices")]
        fit = {}
        if len(good) >= 2:
            ea, pref, r2 = fit_power([p["vertices"] for p in good], [p["narrow_phase_us_per_call"] for p in good])
            fit["narrow_phase_us_per_call"] = dict(exponent=ea, prefactor_us=pref, r2=r2,
                                                   model="us_per_call = prefactor_us * K^exponent, K = hull vertices")
            eb, prefb, r2b = fit_power([p["vertices"] for p in good], [1.0 / p["particle_steps_per_cpu_s"] for p in good])
            fit["cpu_seconds_per_particle_step"] = dict(exponent=eb, prefactor_s=prefb, r2=r2b,
                                                        model="cpu_s per particle-step = prefactor_s * K^exponent")
            log(f"fit: narrow-phase time per call ~ K^{ea:.3f} (r2 {r2:.3f}); CPU per particle-step ~ K^{eb:.3f}")
        doc["vertex_scaling"] = dict(particles=scount, template=SCALING_TEMPLATE, points=points, fit=fit)

    doc["machine"]["loadavg_end"] = os.getloadavg()
    save()
    log(f"wrote {rel(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
