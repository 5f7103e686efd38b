#!/usr/bin/env python3
"""`proxima report`: PNG plots and a markdown summary of one or several `proxima run` output folders
(grain-packing study, Montanari thesis ch. 5: grains sedimented in a box under a falling lid).

Usually started by `proxima report RUN_DIR [RUN_DIR...] [-o OUT_DIR] [--label NAME ...] [--title TEXT]`,
which finds a Python 3 with matplotlib and this file; it can also be run directly:

    python3 proxima_report.py RUN_DIR [RUN_DIR...] [-o OUT_DIR] [--label NAME ...] [--title TEXT]

Reads RUN_DIR/timeseries.csv (required) and RUN_DIR/summary.json (absent while a run is going: the
last CSV row is used and the run is marked "(running)"); the formats are in docs/output-format.md.
Writes OUT_DIR/void_ratio.png, coordination.png, lid_height.png, kinetic_energy.png,
coordination_histogram.png and report.md. Standard library + matplotlib only.

Exit codes: 0 done, 2 bad input (message on stderr naming the folder or file), 1 unexpected failure.
"""
import argparse
import json
import math
import os
import shlex
import sys

PROG = "proxima report"
DASH = "\u2013"  # shown where a value does not apply or is not known
PLOTS = ["void_ratio.png", "coordination.png", "lid_height.png", "kinetic_energy.png", "coordination_histogram.png"]
PACKING_COLUMNS = ["lid_height", "box_volume", "void_ratio", "packing_fraction"]
DPI = 150


class ReportError(Exception):
    """Bad input: printed as `proxima report: MESSAGE`, exit code 2."""


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------


def number(value):
    """A JSON value as a float, or None when it is not a number (null, text, bool, missing)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def finite(value):
    return value is not None and math.isfinite(value)


def lookup(obj, *keys):
    for key in keys:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def parse_row(line, header):
    """The values of one CSV line, or an error text."""
    fields = line.rstrip("\r").split(",")
    if len(fields) != len(header):
        return None, f"{len(fields)} values but the header has {len(header)} columns"
    values = []
    for name, text in zip(header, fields):
        try:
            values.append(float(text))
        except ValueError:
            return None, f"column '{name}': '{text.strip()}' is not a number"
    return values, None


def read_timeseries(run_dir):
    """{column: [values]} from RUN_DIR/timeseries.csv."""
    path = os.path.join(run_dir, "timeseries.csv")
    if not os.path.isfile(path):
        raise ReportError(f"{run_dir}: no timeseries.csv in this folder (is it a `proxima run` output folder?)")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror}")
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not a text file")
    lines = text.split("\n")
    header = [h.strip() for h in lines[0].rstrip("\r").split(",")]
    if not lines[0].strip():
        raise ReportError(f"{path}: empty file (no header line)")
    if "time" not in header:
        raise ReportError(f"{path}: the header has no 'time' column (header: {lines[0].strip()[:200]})")
    if len(set(header)) != len(header):
        raise ReportError(f"{path}: repeated column names in the header")
    partial = not text.endswith("\n")  # a row being appended right now may be incomplete
    rows = []
    for number_, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        values, error = parse_row(line, header)
        if error:
            if partial and number_ == len(lines):
                break  # the last line, still being written by a running `proxima run`
            raise ReportError(f"{path}, line {number_}: {error}")
        rows.append(values)
    if not rows:
        raise ReportError(f"{path}: no data rows (only the header)")
    return {name: [row[i] for row in rows] for i, name in enumerate(header)}


def read_summary(run_dir):
    path = os.path.join(run_dir, "summary.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: malformed JSON (line {e.lineno}, column {e.colno}: {e.msg})")
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not a text file")
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror}")
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object at the top level")
    return data


class Run:
    def __init__(self, folder, label):
        self.folder = folder
        self.label = label
        self.notes = []
        if not os.path.exists(folder):
            raise ReportError(f"{folder}: run folder does not exist")
        if not os.path.isdir(folder):
            raise ReportError(f"{folder}: not a folder (expected a `proxima run` output folder)")
        self.columns = read_timeseries(folder)
        self.summary = read_summary(folder)
        last_step = self.last("step")
        summary_steps = number(lookup(self.summary, "steps"))
        self.running = self.summary is None
        if self.summary is None:
            self.notes.append(f"no summary.json yet: still running; values from the last CSV row "
                              f"(t = {fmt(self.last('time'), '.4g')} s)")
        elif finite(last_step) and finite(summary_steps) and last_step > summary_steps:
            self.running = True  # a resumed run going on past its previous summary
            self.notes.append("timeseries.csv goes past summary.json (a resumed run still going); values from "
                              f"the last CSV row (t = {fmt(self.last('time'), '.4g')} s)")
        if isinstance(lookup(self.summary, "error"), str):
            self.notes.append("the run failed: " + lookup(self.summary, "error"))
        packing = lookup(self.summary, "packing")
        self.packing = packing if isinstance(packing, dict) and not self.running else None
        self.packing_csv = all(c in self.columns for c in PACKING_COLUMNS)
        if not self.packing_csv and self.packing is None:
            self.notes.append("not a packing run (no lid: no lid_height / void_ratio columns): "
                              "e, \u03c6 and lid height do not apply")
        self.histogram = self.read_histogram()

    def last(self, column):
        """Last finite value of a CSV column, or None."""
        for v in reversed(self.columns.get(column, [])):
            if math.isfinite(v):
                return v
        return None

    def final(self, summary_keys, column):
        """Final value: from summary.json when the run has finished, else the last CSV row."""
        if not self.running:
            for keys in summary_keys:
                v = number(lookup(self.summary, *keys))
                if v is not None:
                    return v
        return self.last(column) if column else None

    def read_histogram(self):
        hist = lookup(self.packing, "coordination_histogram")
        if hist is None:
            return None
        if not isinstance(hist, list) or not hist or any(number(c) is None or c < 0 for c in hist):
            self.notes.append("summary.json: packing.coordination_histogram is not a list of counts; ignored")
            return None
        if sum(hist) <= 0:
            return None
        return [float(c) for c in hist]


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------


def fmt(v, spec):
    return format(v, spec) if finite(v) else DASH


def fmt_int(v):
    return f"{int(round(v)):,}" if finite(v) else DASH


def fmt_rate(v):
    if not finite(v):
        return DASH
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.3g}"


def fmt_duration(s):
    if not finite(s):
        return DASH
    if s < 60:
        return f"{s:.3g} s"
    if s < 3600:
        m, sec = divmod(int(round(s)), 60)
        return f"{m} min {sec:02d} s"
    h, rest = divmod(int(round(s)), 3600)
    return f"{h} h {rest // 60:02d} min"


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_code(text):
    return "`" + str(text).replace("`", "'") + "`"


# ---------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------


def import_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError as e:
        raise ReportError(f"matplotlib is not available to {sys.executable} ({e}). Install it with "
                          "`sudo apt-get install python3-matplotlib` (or run `bash scripts/deps.sh`), or point "
                          "PROXIMA_PYTHON to a Python 3 that has matplotlib")
    return plt, MaxNLocator


class Plotter:
    def __init__(self, out_dir, runs):
        self.plt, self.MaxNLocator = import_matplotlib()
        self.out_dir = out_dir
        self.runs = runs
        cycle = self.plt.get_cmap("tab10").colors
        self.colours = {id(r): cycle[i % len(cycle)] for i, r in enumerate(runs)}
        styles = ["-", "--", "-.", ":"]
        self.styles = {id(r): styles[(i // len(cycle)) % len(styles)] for i, r in enumerate(runs)}

    def figure(self):
        fig, ax = self.plt.subplots(figsize=(8, 5))
        return fig, ax

    def finish(self, fig, ax, name, title, shown):
        ax.set_title(title)
        if shown:
            ax.legend(fontsize="small", ncol=1 if shown <= 4 else 2, framealpha=0.85)
        else:
            ax.text(0.5, 0.5, "no run has these data", transform=ax.transAxes, ha="center", va="center",
                    fontsize="large", color="0.4")
        fig.tight_layout()
        path = os.path.join(self.out_dir, name)
        try:
            fig.savefig(path, dpi=DPI)
        except OSError as e:
            raise ReportError(f"{path}: cannot write: {e.strerror}")
        finally:
            self.plt.close(fig)

    def time_plot(self, name, column, ylabel, title, log=False):
        """One curve per run against time; returns the labels of the runs left out."""
        fig, ax = self.figure()
        shown, skipped = 0, []
        for run in self.runs:
            if column not in run.columns:
                skipped.append(run.label)
                continue
            t = run.columns["time"]
            y = [v if math.isfinite(v) and (v > 0 or not log) else math.nan for v in run.columns[column]]
            points = sum(1 for v in y if not math.isnan(v))
            if points == 0:
                skipped.append(run.label)
                continue
            ax.plot(t, y, label=run.label, color=self.colours[id(run)], linestyle=self.styles[id(run)],
                    linewidth=1.4, marker="o" if points <= 40 else None, markersize=3)
            shown += 1
        ax.set_xlabel("time t (s)")
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
            ax.grid(True, which="major", alpha=0.5)
            ax.grid(True, which="minor", alpha=0.15)
        else:
            ax.ticklabel_format(axis="y", useOffset=False)
            ax.grid(True, alpha=0.5)
        self.finish(fig, ax, name, title, shown)
        return skipped

    def histogram_plot(self, name, title):
        fig, ax = self.figure()
        with_data = [r for r in self.runs if r.histogram]
        skipped = [r.label for r in self.runs if not r.histogram]
        kmax = 0
        for run in with_data:
            kmax = max(kmax, max(k for k, c in enumerate(run.histogram) if c > 0) if any(run.histogram) else 0)
        width = 0.8 / max(1, len(with_data))
        for i, run in enumerate(with_data):
            total = sum(run.histogram)
            ks = list(range(kmax + 1))
            fractions = [(run.histogram[k] if k < len(run.histogram) else 0) / total for k in ks]
            ax.bar([k - 0.4 + width * (i + 0.5) for k in ks], fractions, width=width, label=run.label,
                   color=self.colours[id(run)], edgecolor="black" if len(with_data) <= 4 else "none", linewidth=0.4)
        ax.set_xlabel("contacts per particle k (particle\u2013particle)")
        ax.set_ylabel("fraction of particles")
        ax.xaxis.set_major_locator(self.MaxNLocator(integer=True))
        ax.set_axisbelow(True)
        ax.grid(True, axis="y", alpha=0.5)
        self.finish(fig, ax, name, title, len(with_data))
        return skipped


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def default_labels(folders):
    base = [os.path.basename(os.path.normpath(os.path.abspath(f))) or f for f in folders]
    # Folders with the same name: the paths as given (counted on the names, before any is renamed:
    # renaming inside the count gave "x1/run" and "run" for x1/run and x2/run)
    names = [os.path.normpath(f) if base.count(b) > 1 else b for f, b in zip(folders, base)]
    seen = {}
    for i, name in enumerate(names):  # the same folder twice
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            names[i] = f"{name} ({seen[name]})"
    return names


def table_row(run):
    v = run.final
    e = v([("packing", "void_ratio")], "void_ratio")
    phi = v([("packing", "packing_fraction")], "packing_fraction")
    lid = v([("packing", "lid_height")], "lid_height")
    if not run.packing_csv and run.packing is None:
        e = phi = lid = None
    calls = v([("counters", "narrow_phase_calls")], "narrow_phase_calls")
    skipped = v([("counters", "narrow_phase_skipped")], "narrow_phase_skipped")
    saved = None if run.running else number(lookup(run.summary, "narrow_phase_saved_fraction"))
    if saved is None and finite(calls) and finite(skipped):
        saved = skipped / (calls + skipped) if calls + skipped > 0 else 0.0
    particles = number(lookup(run.summary, "particles"))
    time = v([("time",)], "time")
    if run.running:
        settled = "(running)"
    elif isinstance(lookup(run.summary, "error"), str):
        settled = "failed"  # `proxima run` stopped it (a blow-up); the note gives the reason
    else:
        stopped = lookup(run.summary, "stopped_early")
        settled = DASH if not isinstance(stopped, bool) else ("yes" if stopped else "no")
    return [
        run.label,
        fmt_int(particles),
        fmt(time, ".4g") + (" (running)" if run.running else ""),
        fmt_int(v([("steps",)], "step")),
        fmt(e, ".4f"),
        fmt(phi, ".4f"),
        fmt(v([("packing", "coordination_number"), ("stats", "coordination_number")], "coordination_number"), ".3f"),
        fmt(lid, ".5g"),
        fmt(v([("stats", "kinetic_energy")], "kinetic_energy"), ".3e"),
        fmt_int(calls),
        fmt(100 * saved if finite(saved) else None, ".1f") + (" %" if finite(saved) else ""),
        fmt_rate(v([("particle_steps_per_second",)], "particle_steps_per_second")),
        fmt_duration(v([("wall_time_seconds",)], "wall_seconds")),
        settled,
    ]


def shapes_text(summary):
    shapes = lookup(summary, "shapes")
    if not isinstance(shapes, list):
        return None
    counts = {}
    for s in shapes:
        if isinstance(s, dict) and number(s.get("particles")) is not None:
            key = f"{s.get('name', '?')} ({s.get('type', '?')})"
            counts[key] = counts.get(key, 0) + int(s["particles"])
    return ", ".join(f"{n} \u00d7 {k}" for k, n in counts.items()) or None


def write_markdown(path, title, runs, skipped, command):
    out = [f"# {title}", ""]
    out += ["## Runs", ""]
    header = ["run", "particles", "time (s)", "steps", "void ratio e", "packing fraction \u03c6", "Z",
              "lid height (m)", "kinetic energy (J)", "narrow-phase calls", "saved by bound",
              "particle-steps/s", "wall time", "settled"]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "|".join("---" if i in (0, len(header) - 1) else "---:" for i in range(len(header))) + "|")
    for run in runs:
        out.append("| " + " | ".join(md_cell(c) for c in table_row(run)) + " |")
    out += ["",
            "e = (V_box \u2212 V_particles) / V_particles (Eq. 5.1), V_box the box volume under the lid; "
            "\u03c6 = V_particles / V_box = 1 / (1 + e); Z = \u03a3 C_i / N = 2 \u00d7 contacts / particles "
            "(Eq. 5.2, particle\u2013particle contacts). \"Saved by bound\": share of the non-sphere "
            "pair-steps whose narrow phase the conservative distance bound skipped, skipped / (calls + skipped). "
            "\"Settled\": the run stopped early on its kinetic-energy criterion. "
            f"{DASH}: does not apply or not known.", ""]
    out += ["Run folders:", ""]
    for run in runs:
        parts = [f"**{md_cell(run.label)}**: {md_code(os.path.abspath(run.folder))}"]
        scenario = lookup(run.summary, "scenario")
        if isinstance(scenario, str):
            parts.append(f"scenario {md_code(scenario)}")
        shapes = shapes_text(run.summary)
        if shapes:
            parts.append(shapes)
        out.append("- " + "; ".join(parts))
        for note in run.notes:
            out.append(f"  - {note}")
    out.append("")

    out += ["## Plots", ""]
    sections = [
        ("Void ratio", "void_ratio.png", "void ratio e against time"),
        ("Coordination number", "coordination.png", "coordination number Z against time"),
        ("Lid height", "lid_height.png", "lid height against time"),
        ("Kinetic energy", "kinetic_energy.png", "kinetic energy against time (log scale)"),
        ("Coordination histogram", "coordination_histogram.png",
         "final distribution of contacts per particle"),
    ]
    for heading, name, alt in sections:
        out += [f"### {heading}", "", f"![{alt}]({name})", ""]
        if skipped.get(name):
            out += ["Not shown (no data for this plot): " + ", ".join(md_cell(l) for l in skipped[name]) + ".", ""]

    out += ["## 3-D view in ParaView", "",
            "1. File \u2192 Open \u2192 `RUN_DIR/particles.pvd` \u2192 Apply: one dataset over the simulated "
            "times of its frames.",
            "2. File \u2192 Open \u2192 `RUN_DIR/walls.pvd` \u2192 Apply (box and lid, drawn where they are at each "
            "frame); Properties \u2192 Opacity 0.3 to see the grains through the walls.",
            "3. Colour `particles.pvd` by a particle field: `speed` (or `velocity` \u2192 Magnitude), "
            "`angular_velocity`, `shape`, `material` or `id` (for `shape` and `material` tick "
            "*Interpret Values As Categories*).",
            "4. Play the time series with the VCR controls (Animation View \u2192 *Snap To TimeSteps* for one "
            "frame per output step). While a run goes on, File \u2192 Reload Files (F5) picks up new frames.",
            "",
            "Large runs: open `centres.pvd` and apply *Glyph* (Glyph Type Sphere, Scale Array "
            "`bounding_radius`, Scale Factor 2, Glyph Mode All Points). *Clip* with a plane shows the inside "
            "of the packing. Force chains: open `contacts.pvd` (one line per contact) and colour by "
            "`normal_force`; *Tube* with Vary Radius By Scalar draws the strong chains thick. More in "
            "docs/output-format.md (\"Viewing results in ParaView\").",
            ""]
    for run in runs:
        files = [f for f in ("particles.pvd", "walls.pvd", "contacts.pvd")
                 if os.path.isfile(os.path.join(run.folder, f))]
        if files:
            text = ", ".join(md_code(os.path.join(os.path.abspath(run.folder), f)) for f in files)
        else:
            text = "no `particles.pvd` (run with `--no-vtk`, or no frame written yet)"
        out.append(f"- **{md_cell(run.label)}**: {text}")
    out += ["", "## Command", "", "```sh", command, "```", ""]
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(out))
    except OSError as e:
        raise ReportError(f"{path}: cannot write: {e.strerror}")


def make_report(args, command):
    labels = args.label or []
    if labels and len(labels) != len(args.runs):
        raise ReportError(f"{len(labels)} --label value(s) for {len(args.runs)} run folder(s) "
                          f"({', '.join(args.runs)}); give one label per run folder, in order, or none")
    if any(not l.strip() for l in labels):
        raise ReportError("empty --label value")
    labels = labels or default_labels(args.runs)
    runs = [Run(folder, label) for folder, label in zip(args.runs, labels)]

    out_dir = args.output
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ReportError(f"{out_dir}: output path exists and is not a folder")
    plotter = Plotter(out_dir, runs)  # fails with the install hint when matplotlib is missing
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise ReportError(f"{out_dir}: cannot create the output folder: {e.strerror}")

    skipped = {
        "void_ratio.png": plotter.time_plot("void_ratio.png", "void_ratio", "void ratio e (\u2013)",
                                            "Void ratio $e = (V_\\mathrm{box} - V_p)/V_p$ (Eq. 5.1)"),
        "coordination.png": plotter.time_plot("coordination.png", "coordination_number", "coordination number Z (\u2013)",
                                              "Coordination number $Z = 2 N_c / N_p$ (Eq. 5.2)"),
        "lid_height.png": plotter.time_plot("lid_height.png", "lid_height", "lid height (m)", "Lid height"),
        "kinetic_energy.png": plotter.time_plot("kinetic_energy.png", "kinetic_energy", "kinetic energy (J)",
                                                "Kinetic energy", log=True),
        "coordination_histogram.png": plotter.histogram_plot("coordination_histogram.png",
                                                             "Final contacts per particle"),
    }
    report = os.path.join(out_dir, "report.md")
    write_markdown(report, args.title or "proxima report", runs, skipped, command)
    return report


def main(argv):
    parser = argparse.ArgumentParser(prog=PROG, description="PNG plots and a markdown summary of proxima run "
                                     "output folders")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="output folder of `proxima run`")
    parser.add_argument("-o", "--output", default="report", metavar="OUT_DIR", help="output folder (default: report)")
    parser.add_argument("--label", action="extend", nargs="+", metavar="NAME",
                        help="one label per run folder (default: the folder names)")
    parser.add_argument("--title", default=None, help="report title")
    parser.add_argument("--command", default=None, help=argparse.SUPPRESS)  # set by `proxima report`
    args = parser.parse_intermixed_args(argv)
    command = args.command or shlex.join([sys.executable, sys.argv[0], *argv])
    try:
        report = make_report(args, command)
    except ReportError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except (ValueError, OverflowError, IndexError) as e:
        # Numbers no run writes (NaN or 1e400 counts, values near the largest double): a damaged
        # file. Said as such, with the folders read, instead of an "internal error".
        print(f"{PROG}: the data in {', '.join(args.runs)} cannot be plotted ({type(e).__name__}: {e}): a damaged "
              f"summary.json or timeseries.csv? (values out of range)", file=sys.stderr)
        return 2
    print(report)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # no traceback for the user; the message says what failed
        print(f"{PROG}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
