#!/usr/bin/env python3
"""Contract of `proxima report`: PNG plots and report.md from run folders, clear errors (exit 2, no
traceback). Usage: test_report.py PROXIMA

Needs only the standard library here; `proxima report` itself needs a Python 3 with matplotlib
(python3-matplotlib, see scripts/deps.sh)."""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

exe = os.path.abspath(sys.argv[1])
failures = []
checks = 0
PLOTS = ["void_ratio.png", "coordination.png", "lid_height.png", "kinetic_energy.png", "coordination_histogram.png"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BASE = ("step,time,kinetic_energy,potential_energy,contacts,wall_contacts,mean_overlap,max_overlap,"
        "coordination_number,max_speed,narrow_phase_calls,narrow_phase_skipped,neighbour_rebuilds,wall_seconds,"
        "particle_steps_per_second").split(",")
PACKING = ["lid_height", "box_volume", "void_ratio", "packing_fraction"]
FINAL_E = 0.61234567  # final void ratio of the synthetic packing run


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def report(args, cwd, env=None):
    return subprocess.run([exe, "report", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def write_run(folder, packing, rows=6, summary=True):
    """A synthetic `proxima run` output folder: 60 particles settling under gravity (and a lid)."""
    os.makedirs(folder)
    n = 60
    particle_volume = n * 4 / 3 * math.pi * 0.001 ** 3
    header = BASE + (PACKING if packing else [])
    lines = [",".join(header)]
    for i in range(rows):
        f = i / (rows - 1)
        t = 0.01 * i
        contacts = int(90 * f)
        row = [100 * i, t, 1e-3 * (1 - f) + 1e-9, 5e-3 - 1e-3 * f, contacts, 10 * i, 1e-6 * f, 3e-6 * f,
               2 * contacts / n, 0.5 * (1 - f), 40 * i, 60 * i, 1 + i, 0.02 * i, 0 if i == 0 else 2.5e6]
        if packing:
            e = 1.5 - (1.5 - FINAL_E) * f
            box_volume = particle_volume * (1 + e)
            lid = box_volume / (0.01 * 0.01)
            row += [lid, box_volume, math.nan if i == 0 else e, math.nan if i == 0 else 1 / (1 + e)]
        lines.append(",".join("nan" if isinstance(v, float) and math.isnan(v) else
                              (str(v) if isinstance(v, int) else f"{v:.10g}") for v in row))
    with open(os.path.join(folder, "timeseries.csv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if not summary:
        return
    last = dict(zip(header, [float(x) for x in lines[-1].split(",")]))
    s = {
        "particles": n, "walls": 6 if packing else 5, "time": last["time"], "steps": int(last["step"]),
        "time_step": 1e-4, "particle_volume": particle_volume,
        "shapes": [{"name": "ball", "type": "sphere", "particles": n, "volume": particle_volume / n,
                    "bounding_radius": 0.001, "equivalent_radius": 0.001}],
        "stats": {"kinetic_energy": last["kinetic_energy"], "contacts": int(last["contacts"]),
                  "coordination_number": last["coordination_number"]},
        "counters": {"narrow_phase_calls": int(last["narrow_phase_calls"]),
                     "narrow_phase_skipped": int(last["narrow_phase_skipped"]), "neighbour_rebuilds": 6},
        "narrow_phase_saved_fraction": 0.6, "scenario": "synthetic.yaml", "wall_time_seconds": 0.1,
        "particle_steps_per_second": 2.5e6, "stopped_early": packing, "state_hash": "0123456789abcdef",
    }
    if packing:
        s["packing"] = {"lid_height": last["lid_height"], "box_volume": last["box_volume"],
                        "particle_volume": particle_volume, "void_ratio": FINAL_E,
                        "packing_fraction": 1 / (1 + FINAL_E), "coordination_number": last["coordination_number"],
                        "coordination_histogram": [2, 5, 10, 20, 15, 8]}
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(s, f, indent=2)


def png_dpi(data):
    """Horizontal resolution from the pHYs chunk, in dots per inch (None without one)."""
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"pHYs":
            x, _, unit = struct.unpack(">IIB", data[pos + 8:pos + 17])
            return x * 0.0254 if unit == 1 else None
        pos += 12 + length
    return None


def check_pngs(out, what):
    for name in PLOTS:
        path = os.path.join(out, name)
        data = open(path, "rb").read() if os.path.isfile(path) else b""
        check(data.startswith(PNG_SIGNATURE), f"{what}: {name} is a PNG")
        dpi = png_dpi(data)
        check(dpi is not None and abs(dpi - 150) < 1, f"{what}: {name} at 150 dpi (got {dpi})")


def table_row(md, label):
    """The cells of the report table's row for a run."""
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells and cells[0] == label:
            return cells
    return None


def check_error(r, what, *names):
    check(r.returncode == 2, f"{what}: exit 2 (got {r.returncode}: {r.stderr.strip()[-300:]})")
    check(all(n in r.stderr for n in names), f"{what}: message names {names} ({r.stderr.strip()[-300:]})")
    check("Traceback" not in r.stderr + r.stdout, f"{what}: no Python traceback")


with tempfile.TemporaryDirectory() as tmp:
    write_run(os.path.join(tmp, "lidded"), packing=True)
    write_run(os.path.join(tmp, "plain"), packing=False)

    # Two runs with labels and a title.
    r = report(["lidded", "plain", "-o", "out/rep", "--label", "lid run", "free run", "--title", "Packing study"], tmp)
    check(r.returncode == 0, f"report exits 0 (got {r.returncode}: {r.stderr.strip()[-800:]})")
    out = os.path.join(tmp, "out", "rep")
    check_pngs(out, "two runs")
    md_path = os.path.join(out, "report.md")
    md = open(md_path, encoding="utf-8").read() if os.path.isfile(md_path) else ""
    check(md.startswith("# Packing study"), "report.md starts with the title")
    check("lid run" in md and "free run" in md, "report.md names both labels")
    row = table_row(md, "lid run") or []
    check(f"{FINAL_E:.4f}" in row, f"final void ratio {FINAL_E:.4f} in the packing run's row ({row})")
    check(f"{1 / (1 + FINAL_E):.4f}" in row, f"packing fraction in the packing run's row ({row})")
    check("yes" in row and "60" in row, f"settled and particle count in the packing run's row ({row})")
    check("60.0 %" in row, f"narrow-phase share saved in the packing run's row ({row})")
    plain = table_row(md, "free run") or []
    check(len(plain) == 14 and plain[4] == "\u2013" and plain[7] == "\u2013",
          f"e and lid height are '\u2013' for the run without a lid ({plain})")
    check("not a packing run" in md, "the run without a lid is noted")
    for name in PLOTS:
        check(f"]({name})" in md, f"report.md embeds {name}")
    check("particles.pvd" in md and "walls.pvd" in md and "speed" in md, "report.md has the ParaView hint")
    check("report lidded plain -o out/rep --label 'lid run' 'free run' --title 'Packing study'" in md,
          "report.md quotes the command line")

    # Default labels (folder names); a run still going (no summary.json) is marked "(running)".
    write_run(os.path.join(tmp, "going"), packing=True, summary=False)
    with open(os.path.join(tmp, "going", "timeseries.csv"), "a") as f:
        f.write("600,0.06,1e-9")  # a row being appended right now: ignored
    r = report(["lidded", os.path.join(tmp, "going") + "/"], tmp)
    check(r.returncode == 0, f"report with a running run exits 0 ({r.stderr.strip()[-500:]})")
    md = open(os.path.join(tmp, "report", "report.md"), encoding="utf-8").read() if r.returncode == 0 else ""
    check(table_row(md, "lidded") is not None and table_row(md, "going") is not None,
          "default labels are the folder names, default output folder 'report'")
    check("(running)" in (table_row(md, "going") or []), "a run without summary.json is marked (running)")
    check(f"{FINAL_E:.4f}" in (table_row(md, "going") or []), "the running run's e comes from the last CSV row")
    check_pngs(os.path.join(tmp, "report"), "running run")
    # Two folders of the same name are labelled by their paths, both of them (it gave "x1/run", "run").
    for sub in ("x1", "x2"):
        write_run(os.path.join(tmp, sub, "run"), packing=True, summary=True)
    r = report(["x1/run", "x2/run", "-o", "out/same"], tmp)
    md = open(os.path.join(tmp, "out", "same", "report.md"), encoding="utf-8").read() if r.returncode == 0 else ""
    check(table_row(md, "x1/run") is not None and table_row(md, "x2/run") is not None,
          f"same-named folders labelled by their paths ({r.returncode}: {r.stderr.strip()[-300:]})")

    # Bad input: exit 2, the folder or file named, no traceback.
    check_error(report([], tmp), "no run folder", "RUN_DIR")
    check_error(report(["lidded", "nowhere"], tmp), "missing folder", "nowhere")
    os.makedirs(os.path.join(tmp, "empty-run"))
    check_error(report(["empty-run"], tmp), "folder without timeseries.csv", "empty-run", "timeseries.csv")
    check_error(report(["lidded", "plain", "--label", "only-one"], tmp), "label count mismatch", "lidded", "plain")
    write_run(os.path.join(tmp, "broken"), packing=False)
    with open(os.path.join(tmp, "broken", "timeseries.csv"), "a") as f:
        f.write("7,0.07,abc\n8,0.08\n")
    check_error(report(["broken"], tmp), "malformed CSV row", os.path.join("broken", "timeseries.csv"), "line 8")
    with open(os.path.join(tmp, "plain", "summary.json"), "r+") as f:
        good = f.read()
        f.seek(0)
        f.write("{\"particles\": ")
        f.truncate()
    check_error(report(["plain"], tmp), "malformed summary.json", os.path.join("plain", "summary.json"))
    with open(os.path.join(tmp, "plain", "summary.json"), "w") as f:
        f.write(good)

    # matplotlib missing (shadowed by a package that fails to import): the install hint, exit 2.
    shadow = os.path.join(tmp, "shadow", "matplotlib")
    os.makedirs(shadow)
    with open(os.path.join(shadow, "__init__.py"), "w") as f:
        f.write("raise ImportError('No module named matplotlib (test shadow)')\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(shadow))
    check_error(report(["lidded", "-o", "nomatplotlib"], tmp, env), "matplotlib missing", "python3-matplotlib")

    # A real, short run of the built-in default scenario, then a report on it.
    rr = subprocess.run([exe, "run", "--duration", "0.01", "--no-vtk", "-q", "-o", "real"], cwd=tmp,
                        capture_output=True, text=True, timeout=600)
    check(rr.returncode == 0, f"proxima run exits 0 ({rr.stderr.strip()[-500:]})")
    r = report(["real", "lidded", "-o", "real-report"], tmp)
    check(r.returncode == 0, f"report on a real run exits 0 ({r.stderr.strip()[-800:]})")
    check_pngs(os.path.join(tmp, "real-report"), "real run")
    md = open(os.path.join(tmp, "real-report", "report.md"), encoding="utf-8").read() if r.returncode == 0 else ""
    real = json.load(open(os.path.join(tmp, "real", "summary.json"))) if rr.returncode == 0 else {}
    row = table_row(md, "real") or []
    check(len(row) == 14 and row[1] == f"{real.get('particles', -1):,}" and row[13] == "no",
          f"the real run's row: particles from summary.json, not settled ({row})")
    check("no `particles.pvd`" in md, "a run without VTK frames is noted in the ParaView section")

print(f"{checks - len(failures)}/{checks} checks passed")
sys.exit(1 if failures or checks == 0 else 0)
