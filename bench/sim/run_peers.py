#!/usr/bin/env python3
"""Peer side of proxima's whole-simulation benchmark: runs LIGGGHTS, LAMMPS and Yade on the same
scenes (bench/sim/scenes.py) with the same settle-then-time protocol (bench/peers/README.md) and
writes particle-steps per second, peak memory and a settled check as JSON.

  python3 bench/sim/run_peers.py --scene spheres10k --peers liggghts,lammps,yade --out results.json
  python3 bench/sim/run_peers.py --scene polyhedra --peers yade --polyhedra-count 1000 --out poly.json
  python3 bench/sim/run_peers.py --scene spheres10k --quick --out smoke.json     # small, seconds

stdlib only. A peer whose executable is missing is recorded with status "unavailable"; a peer that
fails or times out is recorded with its status and the tail of its output; the run goes on.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS_DIR = os.path.join(ROOT, "bench", "peers")
sys.path.insert(0, HERE)
import scenes as S  # noqa: E402

PEER_EXE = {"liggghts": ["liggghts"], "lammps": ["lmp", "lmp_serial", "lmp_mpi", "lammps"], "yade": ["yade"]}
PEER_PKG = {"liggghts": "liggghts", "lammps": "lammps", "yade": "yade"}
# Peers able to run each scene type.
SUPPORTS = {"sphere": {"liggghts", "lammps", "yade"}, "polyhedron": {"yade"}}
SETTLED_VMAX = 0.05  # m/s: the bed counts as settled if no particle is faster at the start of the timed phase

MARKERS = ("timed_start.mark", "timed_end.mark")  # created by the LIGGGHTS/LAMMPS inputs (`shell touch`)
CPU_USE_RE = re.compile(r"([0-9.]+)% CPU use with")
LOOP_RE = re.compile(r"Loop time of\s+([0-9.eE+-]+)\s+on\s+(\d+)\s+procs?\s+for\s+(\d+)\s+steps\s+with\s+(\d+)\s+atoms")


def find_exe(peer: str):
    for name in PEER_EXE[peer]:
        p = shutil.which(name)
        if p:
            return p
    return None


def dpkg_version(pkg: str):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True, timeout=20)
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def banner_version(peer: str, text: str):
    pats = {"liggghts": r"LIGGGHTS \(Version ([^)]*)\)", "lammps": r"LAMMPS \(([^)]*)\)", "yade": r"Welcome to Yade (\S+)"}
    m = re.search(pats[peer], text)
    return m.group(1).strip() if m else None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_seconds(root: int):
    """utime + stime (s) of the live process tree under `root` (read from /proc), or None."""
    try:
        stats = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    txt = f.read()
            except OSError:
                continue
            rest = txt[txt.rindex(")") + 2:].split()
            stats[int(name)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / CLK_TCK)  # ppid, cpu
        children = {}
        for pid, (ppid, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        total, todo = 0.0, [root]
        while todo:
            pid = todo.pop()
            if pid in stats:
                total += stats[pid][1]
            todo += children.get(pid, [])
        return total
    except OSError:
        return None


def run_cmd(cmd, cwd, timeout, env, markers=()):
    """Runs cmd (a list) in its own process group, under /usr/bin/time -v if available.
    `markers`: file names the peer creates (LAMMPS/LIGGGHTS `shell touch`) at the phase boundaries;
    when one appears, the wall time and the CPU time of the peer's process tree are sampled
    (polled every 10 ms), so that the CPU share of the timed phase is known on a busy machine.
    Returns (returncode or None on timeout, wall seconds, combined output, peak RSS in MB or None,
    CPU percent from /usr/bin/time or None, {marker: (wall, cpu seconds)})."""
    time_exe = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    tfile = os.path.join(cwd, "time-v.txt")
    full = ([time_exe, "-v", "-o", tfile] + cmd) if time_exe else cmd
    logf = os.path.join(cwd, "peer-output.txt")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    samples = {}
    t0 = time.time()
    with open(logf, "w") as out:
        proc = subprocess.Popen(full, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            pending = list(markers)
            while pending:
                if proc.poll() is not None:
                    break
                if time.time() - t0 > timeout:
                    raise subprocess.TimeoutExpired(full, timeout)
                if os.path.exists(os.path.join(cwd, pending[0])):
                    samples[pending.pop(0)] = (time.time(), tree_cpu_seconds(proc.pid))
                else:
                    time.sleep(0.01)
            rc = proc.wait(timeout=max(1.0, timeout - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            except ProcessLookupError:
                pass
            rc = None
    wall = time.time() - t0
    with open(logf, errors="replace") as f:
        text = f.read()
    peak, cpu = None, None
    if time_exe and os.path.exists(tfile):
        with open(tfile, errors="replace") as f:
            tv = f.read()
        m = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", tv)
        if m:
            peak = int(m.group(1)) / 1024.0
        m = re.search(r"Percent of CPU this job got:\s*(\d+)%", tv)
        if m:
            cpu = int(m.group(1))
    if peak is None:
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if after > before:  # only meaningful if this child set a new maximum
            peak = after / 1024.0
    return rc, wall, text, peak, cpu, samples


def parse_thermo_blocks(text: str):
    """LAMMPS/LIGGGHTS thermo blocks of `thermo_style custom step atoms ke c_vmax`: list of lists of
    (step, atoms, ke, vmax) rows, one list per run."""
    blocks, cur = [], None
    for line in text.splitlines():
        s = line.split()
        if len(s) >= 4 and s[0] == "Step" and s[1] == "Atoms":
            cur = []
            blocks.append(cur)
            continue
        if cur is not None:
            try:
                cur.append((int(s[0]), int(s[1]), float(s[2]), float(s[3])))
            except (ValueError, IndexError):
                if line.startswith("Loop time"):
                    cur = None
    return blocks


def mpi_prefix(threads: int):
    if threads <= 1:
        return []
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun:
        raise RuntimeError("threads > 1 needs mpirun for LIGGGHTS/LAMMPS")
    pre = [mpirun, "-np", str(threads), "--oversubscribe"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pre.append("--allow-run-as-root")
    return pre


def run_lmp_like(peer, exe, scene, workdir, threads, timeout, env):
    data = os.path.join(workdir, "scene.data")
    S.write_lammps_data(scene, data)
    script = os.path.join(PEERS_DIR, peer, "spheres.in")
    vars_ = dict(data=data, E=S.YOUNG, nu=S.POISSON, e=S.RESTITUTION, mu=S.FRICTION, dt=S.TIME_STEP, skin=S.SKIN,
                 L=scene.base, settle=scene.settle_steps, timed=scene.timed_steps, thermo_every=2000)
    cmd = mpi_prefix(threads) + [exe, "-in", script, "-log", os.path.join(workdir, "log.txt")]
    for k, v in vars_.items():
        cmd += ["-var", k, repr(v) if isinstance(v, float) else str(v)]
    env = dict(env, OMP_NUM_THREADS="1")  # parallel runs use MPI ranks, one thread each
    rc, wall, text, peak, cpu, marks = run_cmd(cmd, workdir, timeout, env, markers=MARKERS)
    rec = dict(command=" ".join(cmd), wall_seconds_total=wall, peak_rss_mb=peak, version=banner_version(peer, text),
               cpu_percent=cpu)
    if len(marks) == 2 and None not in (marks[MARKERS[0]][1], marks[MARKERS[1]][1]):
        w = marks[MARKERS[1]][0] - marks[MARKERS[0]][0]
        c = marks[MARKERS[1]][1] - marks[MARKERS[0]][1]
        if w > 0:
            # the `run` command between the markers: setup + the timed loop
            rec.update(timed_window_wall=w, timed_window_cpu=c, timed_cpu_share=c / w)
    loops = LOOP_RE.findall(text)
    blocks = parse_thermo_blocks(text)
    if rc is None:
        rec["status"] = "timeout"
    elif rc != 0 or len(loops) < 2:
        rec["status"] = "failed"
    else:
        rec["status"] = "ok"
    if len(loops) >= 2:
        secs, procs, steps, atoms = float(loops[-1][0]), int(loops[-1][1]), int(loops[-1][2]), int(loops[-1][3])
        rec.update(particles=atoms, steps=steps, seconds=secs, procs=procs,
                   particle_steps_per_s=atoms * steps / secs if secs > 0 else None,
                   settle_steps=int(loops[-2][2]), settle_seconds=float(loops[-2][0]))
        cpu_use = CPU_USE_RE.findall(text)  # LAMMPS only: "41.3% CPU use with 1 MPI tasks ..." per run
        if len(cpu_use) >= 2:
            rec["loop_cpu_use_percent"] = float(cpu_use[-1])
        share = rec.get("timed_cpu_share")
        if share and secs > 0:
            # what the loop would take with the core to itself (cpu share of the timed window)
            rec["cpu_seconds"] = secs * min(1.0, share / max(1, threads))
            rec["particle_steps_per_cpu_s"] = atoms * steps / rec["cpu_seconds"]
        if len(blocks) >= 2 and blocks[-1]:
            first, last = blocks[-1][0], blocks[-1][-1]
            rec.update(vmax_start=first[3], vmax_end=last[3], ke_start=first[2], ke_end=last[2])
            rec["settled"] = first[3] < SETTLED_VMAX
            if atoms != scene.count:
                rec["note"] = f"{scene.count - atoms} particles lost"
    if rec["status"] != "ok":
        rec["output_tail"] = text[-3000:]
    return rec


def run_yade(exe, scene, workdir, threads, timeout, env):
    params = S.scene_params(scene)
    params["settled_vmax"] = SETTLED_VMAX
    sfile, rfile = os.path.join(workdir, "scene.json"), os.path.join(workdir, "result.json")
    with open(sfile, "w") as f:
        json.dump(params, f)
    script = os.path.join(PEERS_DIR, "yade", "spheres.py" if scene.shape == "sphere" else "polyhedra.py")
    # -f2: log errors only. Yade 2023.02a's Polyhedra code logs a warning ("Unhandled switch case:0" in
    # do_intersect) for every candidate pair without a cached separating plane, i.e. several times per
    # particle per step: tens of MB of log per minute, which would be timed as well.
    cmd = [exe, "-j", str(max(1, threads)), "-f2", "-n", "-x", script, sfile, rfile]
    rc, wall, text, peak, cpu, _ = run_cmd(cmd, workdir, timeout, env)
    rec = dict(command=" ".join(cmd), wall_seconds_total=wall, peak_rss_mb=peak, version=banner_version("yade", text),
               cpu_percent=cpu)
    res = None
    if os.path.exists(rfile):
        with open(rfile) as f:
            res = json.load(f)
    if rc is None:
        rec["status"] = "timeout"
    elif rc != 0 or res is None:
        rec["status"] = "failed"
    else:
        rec["status"] = "ok"
    if res:
        rec.update(res)
        if scene.shape == "sphere":
            rec["settled"] = res["vmax_start"] < SETTLED_VMAX
    else:
        # a run cut by the timeout still printed its progress
        prog = re.findall(r"settle step (\d+) t=([0-9.eE+-]+) s vmax=([0-9.eE+-]+).*?wall=([0-9.]+) s", text)
        if prog:
            rec.update(progress_steps=int(prog[-1][0]), simulated_time=float(prog[-1][1]), vmax_end=float(prog[-1][2]))
    if rec["status"] != "ok":
        rec["output_tail"] = text[-3000:]
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scene", required=True, choices=["spheres10k", "spheres50k", "polyhedra"])
    ap.add_argument("--peers", default="liggghts,lammps,yade", help="comma-separated: liggghts,lammps,yade")
    ap.add_argument("--out", default="peer-results.json")
    ap.add_argument("--threads", type=int, default=1, help="MPI ranks (LIGGGHTS/LAMMPS) or OpenMP threads (Yade)")
    ap.add_argument("--quick", action="store_true", help="small counts and short phases (smoke test)")
    ap.add_argument("--polyhedra-count", type=int, default=None, help="polyhedra scene: particle count "
                    "(default 10000; 100 with --quick)")
    ap.add_argument("--settle-time", type=float, default=None, help="override the settle phase (simulated s)")
    ap.add_argument("--timed-steps", type=int, default=None, help="override the number of timed steps")
    ap.add_argument("--wall-cap", type=float, default=None, help="polyhedra: wall-clock cap of the Yade run (s)")
    ap.add_argument("--timeout", type=float, default=None, help="per-peer timeout (s); default by scene")
    ap.add_argument("--append", action="store_true", help="merge into --out, replacing same scene/peer/count")
    ap.add_argument("--keep", action="store_true", help="keep the peers' working directories")
    a = ap.parse_args()

    scene = S.scenes(quick=a.quick, polyhedra_count=a.polyhedra_count)[a.scene]
    if a.settle_time is not None:
        scene.settle_time = a.settle_time
    if a.timed_steps is not None:
        scene.timed_steps = a.timed_steps
    if a.wall_cap is not None:
        scene.wall_cap = a.wall_cap
    timeout = a.timeout or (scene.wall_cap + 600 if scene.shape == "polyhedron" else
                            (600 if a.quick else {"spheres10k": 3600, "spheres50k": 7200}[a.scene]))
    env = dict(os.environ, OMP_NUM_THREADS=str(max(1, a.threads)))
    peers = [p.strip() for p in a.peers.split(",") if p.strip()]
    results = []
    for peer in peers:
        base = dict(scene=a.scene, peer=peer, quick=a.quick, particles=scene.count, threads=a.threads,
                    shape=scene.shape, box=[scene.base, scene.base, scene.box_height()],
                    settle_time=scene.settle_time, timed_steps_target=scene.timed_steps, dt=S.TIME_STEP,
                    package_version=None, started=datetime.datetime.now().isoformat(timespec="seconds"))
        if peer not in PEER_EXE:
            results.append(dict(base, status="unknown-peer"))
            continue
        base["package_version"] = dpkg_version(PEER_PKG[peer])
        if peer not in SUPPORTS[scene.shape]:
            results.append(dict(base, status="unsupported",
                                note=f"{peer} has no {scene.shape} model in this benchmark"))
            print(f"[run_peers] {peer}: unsupported for {a.scene}", file=sys.stderr)
            continue
        exe = find_exe(peer)
        if not exe:
            results.append(dict(base, status="unavailable", note="executable not found: " + "/".join(PEER_EXE[peer])))
            print(f"[run_peers] {peer}: unavailable", file=sys.stderr)
            continue
        workdir = tempfile.mkdtemp(prefix=f"proxima-peer-{peer}-{a.scene}-")
        print(f"[run_peers] {peer}: {a.scene} ({scene.count} particles) in {workdir}", file=sys.stderr, flush=True)
        try:
            if peer == "yade":
                rec = run_yade(exe, scene, workdir, a.threads, timeout, env)
            else:
                rec = run_lmp_like(peer, exe, scene, workdir, a.threads, timeout, env)
        except Exception as ex:  # keep going with the other peers
            rec = dict(status="error", note=repr(ex))
        rec = dict(base, **rec)
        if rec.get("cpu_seconds") and rec.get("seconds") and "timed_cpu_share" not in rec:
            rec["timed_cpu_share"] = rec["cpu_seconds"] / rec["seconds"]
        # CPU share of the whole peer process (from /usr/bin/time): well below 100 % x threads means the
        # machine was busy and the wall-clock figure understates the peer.
        if rec.get("cpu_percent") is not None:
            rec["contended"] = rec["cpu_percent"] < 90 * max(1, a.threads)
        if a.keep:
            rec["workdir"] = workdir
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        pss = rec.get("particle_steps_per_s")
        print(f"[run_peers] {peer}: {rec['status']}" + (f", {pss / 1e6:.3f} M particle-steps/s" if pss else "")
              + (f", peak {rec['peak_rss_mb']:.0f} MB" if rec.get("peak_rss_mb") else "")
              + (f", settled={rec.get('settled')}" if "settled" in rec else "")
              + (f", {rec['particle_steps_per_cpu_s'] / 1e6:.3f} M per CPU-second (CPU share "
                 f"{rec.get('timed_cpu_share', 0):.0%})" if rec.get("particle_steps_per_cpu_s") else ""),
              file=sys.stderr, flush=True)
        results.append(rec)

    doc = dict(machine=dict(cpu=cpu_model(), cores=os.cpu_count(), platform=platform.platform()),
               protocol="bench/peers/README.md", results=[])
    if a.append and os.path.exists(a.out):
        with open(a.out) as f:
            old = json.load(f)
        keys = {(r["scene"], r["peer"], r.get("particles"), r.get("quick")) for r in results}
        doc["results"] = [r for r in old.get("results", [])
                          if (r.get("scene"), r.get("peer"), r.get("particles"), r.get("quick")) not in keys]
    doc["results"] += results
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"[run_peers] wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
