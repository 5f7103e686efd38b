#!/usr/bin/env python3
"""Markdown tables of run_packing.py results (stdlib only): the resolution table (proxima 1 and 2
threads against Yade's Polyhedra from the same state) and the vertex-count table with the fitted
exponent of the narrow-phase time per call.

  python3 bench/sim/packing_table.py bench/sim/results/packing-measured.json
"""

import json
import sys


def rate(x):
    if not x:
        return "–"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def pct(x):
    return "–" if x is None else f"{x:.0%}"


def resolution_table(doc):
    out = ["| resolution | vertices | grains | contacts (Z) at start | proxima 1 thread: particle-steps/s "
           "(per CPU-s) | proxima 2 threads: particle-steps/s (CPU share) | contact detection (1 thread) | "
           "narrow-phase calls saved by the bound | Yade: steps | Yade: particle-steps/s (per CPU-s) | "
           "proxima / Yade per CPU-s | Yade status |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in doc.get("resolutions", []):
        p = r.get("proxima", {})
        b1 = p.get("best", {}).get("1", {})
        b2 = p.get("best", {}).get("2", {})
        y = r.get("yade", {})
        ysteps = y.get("steps")
        if ysteps is not None and y.get("capped"):
            ysteps = f"{ysteps} (cap {y.get('wall_cap', 0):.0f} s)"
        status = y.get("status", "–")
        if y.get("explode_reason"):
            status += f" ({y['explode_reason']})"
        if y.get("from_earlier_run"):
            status += " (earlier run)"
        if y.get("dt_source") == "yade":
            status += f", Yade's dt {y.get('dt'):.2e} s"
        contacts = p.get("contacts_start")
        z = p.get("coordination_number_start")
        cells = [
            r.get("resolution", "?") + (" (quick)" if doc.get("quick") else ""),
            p.get("vertices") or r.get("vertices_nominal", "–"),
            p.get("particles", "–"),
            f"{contacts} ({z:.2f})" if contacts is not None and z is not None else "–",
            f"{rate(b1.get('particle_steps_per_s'))} ({rate(b1.get('particle_steps_per_cpu_s'))})" if b1 else "–",
            f"{rate(b2.get('particle_steps_per_s'))} ({b2.get('cpu_share', 0):.2f})" if b2 else "–",
            pct(b1.get("contact_detection_share")),
            pct(b1.get("narrow_phase_saved_fraction")),
            ysteps if ysteps is not None else "–",
            f"{rate(y.get('particle_steps_per_s'))} ({rate(y.get('particle_steps_per_cpu_s'))})"
            if y.get("particle_steps_per_s") else "–",
            f"**{r['ratio_per_cpu_s']:.0f}×**" if r.get("ratio_per_cpu_s") else "–",
            status,
        ]
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(out)


def vertex_table(doc):
    vs = doc.get("vertex_scaling")
    if not vs:
        return ""
    out = [f"Vertex-count scaling: {vs.get('particles')} grains (layout of {vs.get('template')} scaled), one thread.",
           "",
           "| vertices requested | hull vertices | narrow-phase µs per call | narrow-phase calls per step | "
           "calls saved by the bound | contact detection | particle-steps/s | particle-steps per CPU-s |",
           "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for p in vs.get("points", []):
        us = p.get("narrow_phase_us_per_call")
        cps = p.get("narrow_phase_calls_per_step")
        cells = [p.get("vertices_requested"), p.get("vertices", "–"),
                 f"{us:.2f}" if us else "–", f"{cps:.0f}" if cps else "–",
                 pct(p.get("narrow_phase_saved_fraction")), pct(p.get("contact_detection_share")),
                 rate(p.get("particle_steps_per_s")), rate(p.get("particle_steps_per_cpu_s"))]
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    fit = vs.get("fit") or {}
    f1, f2 = fit.get("narrow_phase_us_per_call"), fit.get("cpu_seconds_per_particle_step")
    if f1:
        out += ["", f"Fit (least squares in log-log over the hull vertex count K): narrow-phase time per call "
                    f"≈ {f1['prefactor_us']:.3g} µs × K^**{f1['exponent']:.3f}** (r² = {f1['r2']:.3f})"
                + (f"; CPU time per particle-step ∝ K^{f2['exponent']:.3f} (r² = {f2['r2']:.3f})." if f2 else ".")]
    return "\n".join(out)


def main(paths):
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        m = doc.get("machine", {})
        s = doc.get("settings", {})
        print(f"Machine: {m.get('cpu')}, {m.get('cores')} cores. Timed steps {s.get('timed_steps')}, "
              f"proxima repeats {s.get('repeat')} (best shown), Yade cap {s.get('yade_wall_cap')} s.")
        print()
        print(resolution_table(doc))
        loads = []
        for r in doc.get("resolutions", []):
            lp = (r.get("proxima") or {}).get("loadavg_before")
            ly = (r.get("yade") or {}).get("loadavg_before")
            if lp or ly:
                loads.append(f"{r.get('resolution')} {lp[0]:.1f} / {ly[0]:.1f}" if lp and ly else
                             f"{r.get('resolution')} {(lp or ly)[0]:.1f}")
        if loads:
            print()
            print("Load average (1 min) when the proxima / Yade measurement started: " + "; ".join(loads) + ".")
        vt = vertex_table(doc)
        if vt:
            print()
            print(vt)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
