#!/usr/bin/env python3
"""Contract of `proxima run`: output files, resume bit-for-bit, clear errors. Usage: test_run.py PROXIMA"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

exe = sys.argv[1]
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


SCENARIO = """
materials:
  - {name: glass, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}
templates:
  - {name: ball, shape: {type: sphere, radius: 0.001}, material: glass}
  - name: rock
    shape: {type: polytope, points: [[0.0015,0,0],[-0.001,0.001,0],[0,-0.0012,0.0005],[0,0.0004,-0.0014],[0.0003,0.0002,0.0013],[-0.0009,-0.0007,-0.0006]]}
    material: glass
particles:
  - {template: ball, count: 150, region: {min: [0, 0, 0.001], max: [0.012, 0.012, 0.02]}, seed: 3}
  - {template: rock, count: 40, region: {min: [0, 0, 0.02], max: [0.012, 0.012, 0.045]}, seed: 4}
walls:
  - {type: box, name: box, min: [0, 0, 0], max: [0.012, 0.012, 0.06], open_top: true, material: glass}
  - {type: lid, name: lid, height: above_particles, gap: 0.002, mass: 0.001, material: glass}
time: {duration: 0.06}
output: {directory: out, frame_interval: 0.02, csv_interval: 0.004}
"""


def run(args, cwd):
    return subprocess.run([exe, "run", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


with tempfile.TemporaryDirectory() as tmp:
    scen = os.path.join(tmp, "s.yaml")
    with open(scen, "w") as f:
        f.write(SCENARIO)
    # Straight run.
    r = run([scen, "-o", "straight", "-q"], tmp)
    check(r.returncode == 0, f"straight run exits 0 (got {r.returncode}: {r.stderr[-500:]})")
    check("too soft" not in r.stderr, f"no overlap warning for the stiff scenario ({r.stderr.strip()[-300:]})")
    d = os.path.join(tmp, "straight")
    for name in ["summary.json", "timeseries.csv", "particles.pvd", "centres.pvd", "walls.pvd", "contacts.pvd",
                 "checkpoint.bin"]:
        check(os.path.exists(os.path.join(d, name)), f"{name} written")
    summary = json.load(open(os.path.join(d, "summary.json")))
    check(summary.get("particles") == 190, f"190 particles in the summary (got {summary.get('particles')})")
    rows = open(os.path.join(d, "timeseries.csv")).read().strip().splitlines()
    check(len(rows) >= 15, f"CSV has a row per csv_interval (got {len(rows)} lines)")
    check("wall_seconds" in rows[0], "CSV carries wall time")
    frames = os.listdir(os.path.join(d, "frames"))
    check(sum(f.startswith("particles_") for f in frames) == 4, f"4 particle frames (t=0 + 3), got {sorted(frames)}")
    check(sum(f.startswith("contacts_") for f in frames) == 4, f"4 contact-network frames, got {sorted(frames)}")

    # Interrupted at half time, then resumed: the same final state bit for bit.
    r1 = run([scen, "-o", "resumed", "-q", "--duration", "0.03"], tmp)
    check(r1.returncode == 0, "first half exits 0")
    r2 = run([scen, "-o", "resumed", "-q", "--resume"], tmp)
    check(r2.returncode == 0, f"resume exits 0 ({r2.stderr[-300:]})")
    resumed = json.load(open(os.path.join(tmp, "resumed", "summary.json")))
    check(resumed.get("state_hash") == summary.get("state_hash") and summary.get("state_hash") is not None,
          f"resumed state hash equals the straight run ({resumed.get('state_hash')} vs {summary.get('state_hash')})")
    check(resumed.get("steps") == summary.get("steps"), "same step count after resume")
    rrows = open(os.path.join(tmp, "resumed", "timeseries.csv")).read().strip().splitlines()
    # Physics columns, row for row: the interrupted half's closing row (off the CSV cadence) is
    # dropped on resume, so the two series have the same steps.
    table = lambda rs: {x.split(",")[0]: ",".join(x.split(",")[:13]) for x in rs}
    a, b = table(rows), table(rrows)
    check(list(a) == list(b) and all(a[k] == b[k] for k in a),
          f"resumed CSV equals the straight CSV ({len(a)} vs {len(b)} rows)")
    frames = lambda d: sorted(os.listdir(os.path.join(tmp, d, "frames")))
    check(frames("straight") == frames("resumed"), f"resumed frames equal the straight run's ({len(frames('straight'))} vs {len(frames('resumed'))})")

    # Default intervals (20 frames, 200 rows per run) follow time.duration: a resume that extends the
    # run keeps the first session's cadence (it switched to the longer run's cadence mid-series).
    dflt = os.path.join(tmp, "default_cadence.yaml")
    with open(dflt, "w") as f:
        f.write(SCENARIO.replace("output: {directory: out, frame_interval: 0.02, csv_interval: 0.004}", "output: {directory: out}"))
    r1 = run([dflt, "-o", "extended", "-q", "--duration", "0.03"], tmp)
    r2 = run([dflt, "-o", "extended", "-q", "--resume", "--duration", "0.06"], tmp)
    check(r1.returncode == 0 and r2.returncode == 0, f"default-cadence run and its extension exit 0 ({r2.stderr.strip()[-300:]})")
    erows = open(os.path.join(tmp, "extended", "timeseries.csv")).read().strip().splitlines()[1:]
    esteps = [int(x.split(",")[0]) for x in erows]
    gaps = sorted(set(b - a for a, b in zip(esteps, esteps[1:])))
    check(len(erows) > 300 and len(gaps) == 1, f"extended CSV: one row spacing throughout (got {len(erows)} rows, spacings {gaps[:5]})")
    with open(os.path.join(tmp, "extended", "particles.pvd")) as f:
        times = [float(t) for t in re.findall(r'timestep="([^"]+)"', f.read())]
    fgaps = [b - a for a, b in zip(times, times[1:-1])]  # (the last frame closes the run, off the cadence)
    check(len(times) > 30 and max(fgaps) - min(fgaps) < 1e-9, f"extended run: frames at one spacing ({len(times)} frames, spacings {min(fgaps):.6g}..{max(fgaps):.6g})")

    # Resume without a checkpoint, bad scenario: exit 2 with a message naming file, line and field.
    r = run([scen, "-o", "nothing-here", "--resume"], tmp)
    check(r.returncode == 2 and "checkpoint" in r.stderr, "resume without checkpoint is a clear error")
    bad = os.path.join(tmp, "bad.yaml")
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("density: 2500", "density: -1"))
    r = run([bad, "-o", "bad"], tmp)
    check(r.returncode == 2 and "bad.yaml" in r.stderr and "density" in r.stderr, f"bad density named ({r.stderr.strip()})")
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("time: {duration: 0.06}", "time: {duration: 0.06, step: 0.01}"))
    r = run([bad, "-o", "bad"], tmp)
    check(r.returncode == 2 and "stable" in r.stderr, f"time step above the stable limit refused ({r.stderr.strip()})")
    # A thread count beyond the scenario key's limit is refused by the option (99999 crashed libgomp).
    r = run([scen, "-o", "many", "-q", "-j", "99999"], tmp)
    check(r.returncode != 0 and "4096" in r.stderr and "Segmentation" not in r.stderr,
          f"-j 99999 refused ({r.returncode}: {r.stderr.strip()[-200:]})")
    r = run([os.path.join(tmp, "missing.yaml")], tmp)
    check(r.returncode == 2 and "missing.yaml" in r.stderr, "missing scenario file named")

    # Reviewed defects (2026-11-26).
    # A changed scenario is not resumed (the checkpoint of "straight" came from SCENARIO).
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("youngs_modulus: 1.0e7", "youngs_modulus: 2.0e7"))
    r = run([bad, "-o", "straight", "--resume", "-q"], tmp)
    check(r.returncode == 2 and "materials[0].youngs_modulus" in r.stderr, f"resume with a changed scenario refused ({r.stderr.strip()[-300:]})")
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("time: {duration: 0.06}", "time: {duration: 0.08}"))
    r = run([bad, "-o", "straight", "--resume", "-q"], tmp)
    check(r.returncode == 0, f"resume with a longer duration accepted ({r.stderr.strip()[-300:]})")
    # Contacts too soft for the impacts (E = 1e4 Pa: a ball landing from 2 cm overlaps by ~1/4 of its
    # radius): said once, relative to the smaller particle in contact, and the run goes on.
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("youngs_modulus: 1.0e7", "youngs_modulus: 1.0e4"))
    r = run([bad, "-o", "soft", "-q"], tmp)
    check(r.returncode == 0 and r.stderr.count("too soft") == 1 and "smaller particle" in r.stderr,
          f"soft contacts warned once, the run goes on ({r.returncode}: {r.stderr.strip()[-300:]})")
    # A blow-up stops the run with a nonzero status naming a particle.
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("youngs_modulus: 1.0e7", "youngs_modulus: 1.0e9")
                .replace("time: {duration: 0.06}", "time: {duration: 0.3, step: 2.0e-3, force_step: true}"))
    r = run([bad, "-o", "blowup", "-q"], tmp)
    check(r.returncode != 0 and "blew up" in r.stderr and "particle" in r.stderr, f"blow-up detected ({r.returncode}: {r.stderr.strip()[-300:]})")
    blown = json.load(open(os.path.join(tmp, "blowup", "summary.json")))
    check("blew up" in blown.get("error", ""), "a blown-up run's summary.json carries the error")
    brows = [x.split(",") for x in open(os.path.join(tmp, "blowup", "timeseries.csv")).read().strip().splitlines()[1:]]
    check(all(abs(float(x[2])) < 1e6 for x in brows), "no absurd energies kept in the CSV of a blown-up run")
    # A run stopped by its `stop` rule ends on a CSV row written once.
    with open(bad, "w") as f:
        f.write(SCENARIO + "stop: {kinetic_energy: 1.0, min_time: 0.01}\n")
    r = run([bad, "-o", "stopped", "-q"], tmp)
    steps = [x.split(",")[0] for x in open(os.path.join(tmp, "stopped", "timeseries.csv")).read().strip().splitlines()[1:]]
    check(r.returncode == 0 and "stopping" in r.stderr and len(steps) == len(set(steps)), f"stop rule: no repeated last row ({steps[-3:]})")
    # Run lengths that cannot be meant.
    r = run([scen, "-o", "long", "-q", "--duration", "1e16"], tmp)
    check(r.returncode == 2 and "1e10" in r.stderr, f"absurd step count refused ({r.stderr.strip()[-200:]})")
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("time: {duration: 0.06}", "time: {duration: 0.001, step: 0.01, force_step: true}"))
    r = run([bad, "-o", "short", "-q"], tmp)
    check(r.returncode == 2 and "time step" in r.stderr, f"time step longer than the run refused ({r.stderr.strip()[-200:]})")
    # Scenario-file mistakes: a second YAML document, a box and a plane of the same name, a directory.
    with open(bad, "w") as f:
        f.write(SCENARIO + "---\nfoo: 1\n")
    r = run([bad, "-o", "bad"], tmp)
    check(r.returncode == 2 and "documents" in r.stderr, f"second YAML document refused ({r.stderr.strip()})")
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("  - {type: lid,", "  - {type: plane, name: box, point: [0, 0, 0], normal: [0, 0, 1]}\n  - {type: lid,"))
    r = run([bad, "-o", "bad"], tmp)
    check(r.returncode == 2 and "duplicate wall name" in r.stderr, f"duplicate wall name refused ({r.stderr.strip()})")
    r = run([tmp, "-o", "bad"], tmp)
    check(r.returncode == 2 and "directory" in r.stderr, f"directory as scenario named ({r.stderr.strip()})")
    r = run([scen, "-o", "bad", "--duration", "nan"], tmp)
    check(r.returncode != 0 and "--duration" in r.stderr, f"--duration nan refused ({r.stderr.strip()})")
    # Names that are not UTF-8 do not abort the summary.
    with open(bad, "wb") as f:
        f.write(SCENARIO.replace("glass", "verre").encode().replace(b"verre", b"verr\xe9"))
    r = run([bad, "-o", "latin1", "-q", "--duration", "0.004"], tmp)
    check(r.returncode == 0 and os.path.exists(os.path.join(tmp, "latin1", "summary.json")), f"non-UTF-8 name survives ({r.returncode}: {r.stderr.strip()[-300:]})")
    # --no-vtk writes no frames and no frames/ folder (it used to leave an empty one).
    r = run([scen, "-o", "novtk", "-q", "--duration", "0.004", "--no-vtk"], tmp)
    check(r.returncode == 0 and not os.path.exists(os.path.join(tmp, "novtk", "frames"))
          and not os.path.exists(os.path.join(tmp, "novtk", "particles.pvd")),
          f"--no-vtk leaves no frames folder ({r.returncode}: {sorted(os.listdir(os.path.join(tmp, 'novtk'))) if os.path.isdir(os.path.join(tmp, 'novtk')) else '-'})")

    # Review 2026-11-27 (helper): resumes that continued a state they did not produce, and runs that
    # ended "successfully" with nonsense.
    short = ["-q", "--no-vtk", "--duration", "0.012"]
    def fresh(name, scenario=scen):
        return run([scenario, "-o", name, *short], tmp)
    # A missing scenario record: the resume is refused (it was a warning, and a different density was
    # continued).
    fresh("norecord")
    os.remove(os.path.join(tmp, "norecord", "checkpoint.json"))
    r = run([scen, "-o", "norecord", "--resume", "-q", "--no-vtk"], tmp)
    check(r.returncode == 2 and "scenario record" in r.stderr, f"resume without checkpoint.json refused ({r.stderr.strip()[-200:]})")
    # checkpoint.json vouches only for the checkpoint.bin written with it: a state file from another
    # run of the same scenario (here one that stopped earlier) is refused, and so is a record without
    # the digest; the pair written together resumes.
    fresh("pairA")
    run([scen, "-o", "pairB", "-q", "--no-vtk", "--duration", "0.008"], tmp)
    shutil.copy(os.path.join(tmp, "pairB", "checkpoint.bin"), os.path.join(tmp, "pairA", "checkpoint.bin"))
    r = run([scen, "-o", "pairA", "--resume", "-q", "--no-vtk", "--duration", "0.016"], tmp)
    check(r.returncode == 2 and "written with another checkpoint.bin" in r.stderr,
          f"checkpoint.bin of another run refused ({r.stderr.strip()[-300:]})")
    meta_path = os.path.join(tmp, "pairB", "checkpoint.json")
    with open(meta_path) as f:
        meta = json.load(f)
    del meta["checkpoint_fnv1a"]
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    r = run([scen, "-o", "pairB", "--resume", "-q", "--no-vtk", "--duration", "0.016"], tmp)
    check(r.returncode == 2 and "no digest of checkpoint.bin" in r.stderr, f"record without digest refused ({r.stderr.strip()[-300:]})")
    fresh("pairC")
    r = run([scen, "-o", "pairC", "--resume", "-q", "--no-vtk", "--duration", "0.016"], tmp)
    check(r.returncode == 0 and "resuming at step" in r.stderr, f"the pair written together resumes ({r.returncode}: {r.stderr.strip()[-300:]})")
    # A run killed after it wrote a checkpoint's record but before the new state file took its name
    # (state in checkpoint.new.bin, an older checkpoint.bin): the resume takes the state the record
    # names. (Writing checkpoint.bin first left such kills unresumable: a bad-input hunt, 2026-11-27,
    # found 8 of 12 SIGKILLs so.)
    fresh("pending")
    pend = os.path.join(tmp, "pending")
    os.replace(os.path.join(pend, "checkpoint.bin"), os.path.join(pend, "checkpoint.new.bin"))
    shutil.copy(os.path.join(tmp, "pairB", "checkpoint.bin"), os.path.join(pend, "checkpoint.bin"))
    r = run([scen, "-o", "pending", "--resume", "-q", "--no-vtk", "--duration", "0.016"], tmp)
    check(r.returncode == 0 and "resuming at step" in r.stderr and not os.path.exists(os.path.join(pend, "checkpoint.new.bin")),
          f"a state file not yet renamed resumes ({r.returncode}: {r.stderr.strip()[-300:]})")
    # SIGTERM (a batch system's limit) and SIGINT: the run ends its step, checkpoints, exits 128 + signal,
    # and the resume ends where an uninterrupted run ends, bit for bit.
    run([scen, "-o", "uninterrupted", "-q", "--no-vtk", "--duration", "0.2"], tmp)
    reference = json.load(open(os.path.join(tmp, "uninterrupted", "summary.json")))["state_hash"]
    import signal as _signal
    import time as _time
    for sig in (_signal.SIGTERM, _signal.SIGINT):
        out = f"sig{int(sig)}"
        # The handler is installed once the set-up is done: a signal before that ends the run by the
        # default action (on a loaded machine the set-up took over the fixed 0.3 s this waited first).
        # So wait for the first time-series row, then signal; if the signal still came too early
        # (killed by it: return code -signal), try again with a longer wait.
        for attempt in range(5):
            shutil.rmtree(os.path.join(tmp, out), ignore_errors=True)
            p = subprocess.Popen([exe, "run", scen, "-o", out, "-q", "--no-vtk", "--duration", "0.2"], cwd=tmp,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            deadline = _time.time() + 60
            while (not os.path.exists(os.path.join(tmp, out, "timeseries.csv")) and p.poll() is None
                   and _time.time() < deadline):
                _time.sleep(0.02)
            _time.sleep(0.1 * (attempt + 1))
            p.send_signal(sig)
            err = p.communicate(timeout=120)[1]
            if p.returncode != -int(sig):
                break
        if p.returncode == 0:  # (finished before the signal: nothing to check)
            continue
        summ = json.load(open(os.path.join(tmp, out, "summary.json")))
        check(p.returncode == 128 + int(sig) and "--resume" in err and summ.get("stopped_early") is True,
              f"signal {int(sig)}: checkpoint and exit {128 + int(sig)} ({p.returncode}: {err.strip()[-300:]})")
        r = run([scen, "-o", out, "--resume", "-q", "--no-vtk", "--duration", "0.2"], tmp)
        got = json.load(open(os.path.join(tmp, out, "summary.json"))).get("state_hash")
        check(r.returncode == 0 and got == reference, f"signal {int(sig)}: resumed run ends as the uninterrupted one ({got} vs {reference})")
    # A changed seed is named by its field (the particle count check answered first).
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("seed: 3", "seed: 5"))
    fresh("seed")
    r = run([bad, "-o", "seed", "--resume", "-q", "--no-vtk"], tmp)
    check(r.returncode == 2 and "particles[0].seed" in r.stderr, f"changed seed named ({r.stderr.strip()[-200:]})")
    # A mesh file edited between the run and its resume.
    mesh = os.path.join(tmp, "oct.obj")
    octa = "v 1 0 0\nv -1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nv 0 0 -1\nf 1 3 5\nf 3 2 5\nf 2 4 5\nf 4 1 5\nf 3 1 6\nf 2 3 6\nf 4 2 6\nf 1 4 6\n"
    with open(mesh, "w") as f:
        f.write(octa)
    meshy = os.path.join(tmp, "mesh.yaml")
    with open(meshy, "w") as f:
        f.write(SCENARIO.replace("shape: {type: polytope, points: [[0.0015,0,0],[-0.001,0.001,0],[0,-0.0012,0.0005],[0,0.0004,-0.0014],[0.0003,0.0002,0.0013],[-0.0009,-0.0007,-0.0006]]}",
                                 "shape: {type: mesh, file: oct.obj}\n    size: 0.0012"))
    r = fresh("mesh", meshy)
    check(r.returncode == 0, f"mesh scenario runs ({r.stderr.strip()[-300:]})")
    with open(mesh, "w") as f:
        f.write(octa.replace("v 0 0 1\n", "v 0 0 1.3\n"))
    r = run([meshy, "-o", "mesh", "--resume", "-q", "--no-vtk"], tmp)
    check(r.returncode == 2 and "templates[1].shape.file" in r.stderr and "content" in r.stderr,
          f"resume after a mesh edit refused ({r.stderr.strip()[-300:]})")
    # A time series cut short (mid-row, then at a line end) or deleted: refused before any step.
    for cut in ("mid-row", "line", "deleted"):
        fresh("csv")
        path = os.path.join(tmp, "csv", "timeseries.csv")
        text = open(path).read()
        if cut == "deleted":
            os.remove(path)
        else:
            lines = text.splitlines(True)
            open(path, "w").write(text[: len(text) // 2] if cut == "mid-row" else "".join(lines[: len(lines) // 2]))
        r = run([scen, "-o", "csv", "--resume", "-q", "--no-vtk"], tmp)
        check(r.returncode == 2 and "cannot resume the series" in r.stderr, f"CSV {cut}: resume refused ({r.returncode}: {r.stderr.strip()[-250:]})")
    # A lid far too heavy for the bed: the run fails instead of ending with the lid under the floor.
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("mass: 0.001", "mass: 100"))
    r = run([bad, "-o", "heavy", "-q", "--no-vtk", "--duration", "0.2"], tmp)
    check(r.returncode == 1 and ("passed into each other" in r.stderr or "passed through the bed" in r.stderr),
          f"crushing lid stops the run ({r.returncode}: {r.stderr.strip()[-300:]})")
    heavy = json.load(open(os.path.join(tmp, "heavy", "summary.json")))
    check("error" in heavy, "its summary.json carries the error")
    # A very low restitution (heavily damped contacts) runs on the automatic step (it blew up).
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("restitution: 0.5", "restitution: 0.0001"))
    r = run([bad, "-o", "damped", *short], tmp)
    check(r.returncode == 0 and "blew up" not in r.stderr, f"restitution 1e-4 runs ({r.returncode}: {r.stderr.strip()[-300:]})")
    # Number fractions whose sum overflows are refused (every particle got the last size).
    with open(bad, "w") as f:
        f.write(SCENARIO.replace("shape: {type: sphere, radius: 0.001}, material: glass}",
                                 "shape: {type: sphere, radius: 0.001}, material: glass, size: {distribution: table, sizes: [1, 2], fractions: [1e308, 1e308]}}"))
    r = run([bad, "-o", "frac", "-q"], tmp)
    check(r.returncode == 2 and "fractions" in r.stderr, f"overflowing fractions refused ({r.stderr.strip()[-200:]})")

print(f"{checks - len(failures)}/{checks} checks passed")
sys.exit(1 if failures or checks == 0 else 0)
