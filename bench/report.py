#!/usr/bin/env python3
"""Turn proxima_bench / proxima_bench_accuracy / proxima_bench_contact JSON output into docs/benchmarks.md.

Usage: report.py [--bench bench.json --accuracy accuracy.json [--meta meta.json]]
                 [--contact contact.json [--contact-meta contact_meta.json]] --out docs/benchmarks.md

Either part may be omitted: the distance part (from --bench/--accuracy) or the Penetration section (from
--contact, bench/report_contact.py) is then kept as it is in the existing --out file.

Python 3 standard library only.
"""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_contact  # noqa: E402  (the Penetration section)

CONFIGS = [
    ("distant", "2"),
    ("close", "1e-3"),
    ("touching", "1e-9"),
    ("overlapping", "-0.1"),
]

POLY_PROXIMA = [
    ("proxima_sv_cold_bf", "SV cold BF"),
    ("proxima_sv_cold_hc", "SV cold HC"),
    ("proxima_sv_warm_bf", "SV warm BF"),
    ("proxima_sv_warm_hc", "SV warm HC"),
    ("proxima_jn_cold_bf", "JN cold BF"),
    ("proxima_jn_cold_hc", "JN cold HC"),
    ("proxima_jn_warm_bf", "JN warm BF"),
    ("proxima_jn_warm_hc", "JN warm HC"),
]
ELL_PROXIMA = [
    ("proxima_sv_cold", "SV cold"),
    ("proxima_sv_warm", "SV warm"),
    ("proxima_jn_cold", "JN cold"),
    ("proxima_jn_warm", "JN warm"),
]
PEERS = [
    ("fcl_libccd", "FCL libccd", True),
    ("fcl_indep", "FCL indep", True),
    ("bullet", "Bullet", True),
    ("ccd_gjk", "ccd GJK (bool)", False),
    ("ccd_mpr", "ccd MPR (bool)", False),
]
PEER_LABEL = {k: l for k, l, _ in PEERS}
DIST_PEERS = [k for k, _, d in PEERS if d]


def parse_name(run_name):
    """icosphere/close/N:642/proxima_sv_cold_bf[/min_time:0.050] -> (shape, config, n, method)."""
    parts = run_name.split("/")
    if len(parts) < 4 or not parts[2].startswith("N:"):
        return None
    return parts[0], parts[1], int(parts[2][2:]), parts[3]


def load_bench(path):
    with open(path) as f:
        data = json.load(f)
    iters = defaultdict(list)  # key -> list of iteration entries
    medians = {}
    for b in data.get("benchmarks", []):
        key = parse_name(b.get("run_name", b["name"]))
        if key is None:
            continue
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = b
        else:
            iters[key].append(b)
    results = {}
    for key in set(iters) | set(medians):
        if key in medians:
            b = medians[key]
            reps = b.get("repetitions", 1)
            t = b["cpu_time"]
        else:
            runs = iters[key]
            b = runs[0]
            reps = len(runs)
            t = statistics.median(r["cpu_time"] for r in runs)
        unit = b.get("time_unit", "ns")
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
        results[key] = {
            "ns": t * scale,
            "failures": b.get("failures"),
            "max_err": b.get("max_err"),
            "iters": b.get("iters"),
            "overlap_frac": b.get("overlap_frac"),
            "mean_d": b.get("mean_d"),
            "ref_exact_err": b.get("ref_exact_err"),
            "reps": reps,
        }
    return data.get("context", {}), results


def fmt_ns(t):
    if t is None:
        return "—"
    if t >= 100:
        return f"{t:,.0f}"
    return f"{t:.1f}"


def fmt_err(e):
    if e is None:
        return "—"
    if e == 0:
        return "0"
    return f"{e:.1e}"


def fmt_ratio(r):
    return "—" if r is None else f"{r:.2f}×"


def proxima_cold_key(n):
    """The library default (SupportMode::Auto): brute force below 64 vertices (tol::kHillClimbMinVertices),
    hill-climbing from there on."""
    return "proxima_sv_cold_bf" if n < 64 else "proxima_sv_cold_hc"


def proxima_warm_key(n):
    return "proxima_sv_warm_bf" if n < 64 else "proxima_sv_warm_hc"


def best_peer(res, shape, cfg, n):
    """Fastest distance peer with zero failures in the cell: (key, ns) or None."""
    best = None
    for k in DIST_PEERS:
        r = res.get((shape, cfg, n, k))
        if r is None or r["failures"] is None or r["failures"] > 0:
            continue
        if best is None or r["ns"] < best[1]:
            best = (k, r["ns"])
    return best


def cell_time(res, key):
    r = res.get(key)
    return None if r is None else r["ns"]


def distance_lines(args):
    """The distance benchmark's part of docs/benchmarks.md (everything but the Penetration section)."""
    ctx, res = load_bench(args.bench)
    with open(args.accuracy) as f:
        acc = json.load(f)
    meta = {}
    if args.meta:
        with open(args.meta) as f:
            meta = json.load(f)

    sizes = sorted({k[2] for k in res if k[0] == "icosphere"})
    present_peers = [p for p in PEERS if any(k[3] == p[0] for k in res)]
    present_dist = [p for p in present_peers if p[2]]
    reps = max((r["reps"] for r in res.values()), default=1)

    L = []
    w = L.append
    w("# Benchmarks: GJK distance (polygonal spheres, ellipsoids) and penetration (section Penetration below)")
    w("")
    w("Generated by `scripts/bench.sh` (`bench/report.py`); do not edit by hand.")
    w("")
    w("## Machine and build")
    w("")
    w(f"- CPU: {meta.get('cpu', 'unknown')}; `nproc` = {meta.get('nproc', ctx.get('num_cpus', '?'))}")
    w(f"- Date: {meta.get('date', ctx.get('date', '?'))}")
    w(f"- Compiler: {meta.get('compiler', '?')}; CMake build type {meta.get('build_type', '?')}")
    if meta.get("git"):
        w(f"- Source: git {meta['git']}")
    if meta.get("packages"):
        w(f"- Packages: {meta['packages']}")
    if ctx.get("cpu_scaling_enabled"):
        w("- CPU frequency scaling was enabled (Google Benchmark warning): expect some noise.")
    w(f"- Google Benchmark, {reps} repetition(s) per benchmark, median reported (CPU time); "
      f"min time {ctx.get('proxima_min_time_s', '?')} s per repetition; "
      f"{ctx.get('proxima_pairs_per_cell', '1000')} pre-generated pairs per cell, cycled.")
    if meta.get("bench_seconds"):
        w(f"- Wall time: build {meta.get('build_seconds', '?')} s, proxima_bench {meta['bench_seconds']} s, "
          f"proxima_bench_accuracy {meta.get('accuracy_seconds', '?')} s; script total up to the report "
          f"{meta.get('total_seconds', '?')} s.")
    if meta.get("loadavg"):
        w(f"- Load average (1/5/15 min) {meta['loadavg']} — on this 2-core machine anything above ~1 means the "
          f"benchmark shared the CPU with other work.")
    w("- The machine may have been shared with other work during the run: treat differences below ~20 % as noise; "
      "the ratios between methods measured in the same cell are more robust than absolute times.")
    w("")
    w("Peers compiled in:")
    w("")
    peer_desc = [v for k, v in sorted(ctx.items()) if k.startswith("peer_")]
    if peer_desc:
        for d in peer_desc:
            w(f"- {d}")
    else:
        w("- none (only proxima was measured)")
    w("")

    w("## What is measured")
    w("")
    w("- **Cases.** Icospheres (subdivided icosahedra) with N ∈ {12, 42, 162, 642, 2562, 10242} vertices, all on the "
      "unit sphere, built once with `Polytope::fromPoints`. Two copies per pair, each with a random rotation "
      "(`std::mt19937_64`, fixed seed, 1000 pairs per cell, the same rotations for every N), A at the origin and B at "
      "x = 2 + g, where g is the gap between the *circumscribed spheres*: distant g = 2, close g = 1e-3, touching "
      "g = 1e-9, overlapping g = -0.1. The polytopes lie inside their spheres, so their real gap is g plus up to "
      "~2(1 - cos(edge angle)); in particular \"touching\" pairs are far from touching for small N (see `mean d` in the failure tables: "
      "0.24 for N = 12 down to ~3e-4 for N = 10242). "
      "Ellipsoids: radii (1, 0.6, 0.3), random rotations, A at the origin; for a random unit u per pair, B is placed "
      "so that its support point towards −u sits at A's support point towards +u plus g·u. Both surfaces have normal "
      "±u there, so the exact distance is g for g > 0 and the bodies overlap by |g| along u for g < 0 (u is random "
      "because libccd and FCL start their search along x).")
    w("- **One query = one call** of `proxima::gjkDistance<S, S>(a, poseA, b, poseB, options, cache)` (the relative "
      "transform is computed inside and timed), or of the peer's own distance/intersection call with the peer's "
      "transform type (converted once, up front; the peer applies it inside every query).")
    w("- **proxima variants.** SV = Signed Volumes, JN = Johnson (`GjkOptions::subAlgorithm`); BF = brute-force "
      "support, HC = hill-climbing (`GjkOptions::supportMode`); cold = no cache; warm = one `GjkCache` per pair, and "
      "each visit of a pair alternates between two poses one DEM-like step apart (both bodies rotated by 1e-4 rad and "
      "moved by 1e-4), so every warm query is a genuine re-query after motion, never an identical one. "
      "\"proxima cold\" in the ratio columns is SV cold with the library's default support mode (Auto: BF below 64 "
      "vertices, HC from 64 on), i.e. SV cold BF for N = 12 and 42 and SV cold HC otherwise; \"proxima warm\" likewise.")
    w("- **Correctness.** Every benchmark first answers all 1000 pairs (warm variants: both poses) outside the timed "
      "loop and compares with the reference, proxima SV with exact signs (`SignMode::Exact`), brute force, cold. "
      "A *failure* is |d − d_ref| > 1e-6·max(1, |d_ref|), a wrong overlap classification beyond that tolerance, or no "
      "result. libccd has no distance query (only `ccdGJKIntersect` / `ccdMPRPenetration`), so for it only the "
      "overlap classification is checked and it is left out of the \"best peer\" ratios.")
    w("- **Ratios.** \"best peer / proxima\" = time of the fastest *distance* peer with zero failures in that cell "
      "divided by proxima's time (> 1: proxima is faster). \"—\" when no peer got every pair right.")
    w("")

    # ---- headline --------------------------------------------------------------------------
    if sizes:
        w("## Headline: close pairs (g = 1e-3), ns per query")
        w("")
        w("| N | proxima cold | proxima warm | fastest correct peer | peer ns | peer / proxima cold | peer / proxima warm |")
        w("|---:|---:|---:|---|---:|---:|---:|")
        for n in sizes:
            c = cell_time(res, ("icosphere", "close", n, proxima_cold_key(n)))
            wm = cell_time(res, ("icosphere", "close", n, proxima_warm_key(n)))
            bp = best_peer(res, "icosphere", "close", n)
            if bp:
                w(f"| {n} | {fmt_ns(c)} | {fmt_ns(wm)} | {PEER_LABEL[bp[0]]} | {fmt_ns(bp[1])} | "
                  f"{fmt_ratio(bp[1] / c if c else None)} | {fmt_ratio(bp[1] / wm if wm else None)} |")
            else:
                w(f"| {n} | {fmt_ns(c)} | {fmt_ns(wm)} | — | — | — | — |")
        w("")

    # ---- summary ---------------------------------------------------------------------------
    cells = [("icosphere", cfg, n) for cfg, _ in CONFIGS for n in sizes] + \
            [("ellipsoid", cfg, 0) for cfg, _ in CONFIGS if ("ellipsoid", cfg, 0, "proxima_sv_cold") in res]
    faster, slower, nocorrect, anyslower = [], [], [], []
    for shape, cfg, n in cells:
        ck = proxima_cold_key(n) if shape == "icosphere" else "proxima_sv_cold"
        c = cell_time(res, (shape, cfg, n, ck))
        if c is None:
            continue
        bp = best_peer(res, shape, cfg, n)
        name = f"{shape} {cfg}" + (f" N={n}" if shape == "icosphere" else "")
        anyp = [(k, res[(shape, cfg, n, k)]) for k in DIST_PEERS if (shape, cfg, n, k) in res]
        if anyp:
            k, r = min(anyp, key=lambda kr: kr[1]["ns"])
            if r["ns"] < c and (r["failures"] or 0) > 0:
                anyslower.append((name, r["ns"] / c, k, int(r["failures"] or 0)))
        if bp is None:
            nocorrect.append(name)
        elif bp[1] >= c:
            faster.append((name, bp[1] / c, bp[0]))
        else:
            slower.append((name, bp[1] / c, bp[0]))
    w("## Summary")
    w("")
    if present_dist:
        w(f"- proxima cold (SV, default support mode) vs the fastest distance peer with no failure in the cell: "
          f"proxima faster in {len(faster)} cell(s), slower in {len(slower)}, and in {len(nocorrect)} cell(s) no "
          f"distance peer answered all pairs correctly.")
        if slower:
            w("- Cells where proxima cold is **slower** than a correct peer: " + "; ".join(
                f"{nm} ({PEER_LABEL[pk]} takes {r:.2f}× proxima's time)" for nm, r, pk in slower) + ".")
        if nocorrect:
            w("- Cells without any fully correct distance peer: " + "; ".join(nocorrect) + ".")
        if anyslower:
            w("- Cells where a distance peer *with failures* is faster than proxima cold: " + "; ".join(
                f"{nm} ({PEER_LABEL[pk]}, {r:.2f}× proxima's time, {f} failures)" for nm, r, pk, f in anyslower)
              + ". (The peers stop at ~1e-6 tolerance; proxima certifies ~1e-15 relative: on polytopes GJK "
                "ends exactly, on ellipsoid pairs its Newton finish converges quadratically — see the "
                "iteration counts.)")
    tot = defaultdict(lambda: [0, 0])  # method -> [failures, queries]
    for (shape, cfg, n, m), r in res.items():
        if r["failures"] is None:
            continue
        q = 2000 if "_warm" in m else 1000
        key = "proxima (all variants)" if m.startswith("proxima") else PEER_LABEL.get(m, m)
        tot[key][0] += int(r["failures"])
        tot[key][1] += q
    if tot:
        w("- Failures over all cells (failures / queries checked): " + "; ".join(
            f"{k} {tot[k][0]}/{tot[k][1]}" for k in ["proxima (all variants)"] + [l for _, l, _ in PEERS]
            if k in tot) + ".")
    w("")

    # ---- icosphere tables ------------------------------------------------------------------
    for cfg, glabel in CONFIGS:
        if not any(k[0] == "icosphere" and k[1] == cfg for k in res):
            continue
        w(f"## Icospheres, {cfg} (g = {glabel}): median ns per query")
        w("")
        cols = [(k, l) for k, l in POLY_PROXIMA] + [(k, l) for k, l, _ in present_peers]
        w("| N | " + " | ".join(l for _, l in cols) + " | best peer / proxima cold | best peer / proxima warm |")
        w("|---:|" + "---:|" * len(cols) + "---:|---:|")
        for n in sizes:
            row = [str(n)]
            for k, _ in cols:
                row.append(fmt_ns(cell_time(res, ("icosphere", cfg, n, k))))
            bp = best_peer(res, "icosphere", cfg, n)
            c = cell_time(res, ("icosphere", cfg, n, proxima_cold_key(n)))
            wm = cell_time(res, ("icosphere", cfg, n, proxima_warm_key(n)))
            if bp:
                row.append(f"{fmt_ratio(bp[1] / c if c else None)} ({PEER_LABEL[bp[0]]})")
                row.append(fmt_ratio(bp[1] / wm if wm else None))
            else:
                row += ["—", "—"]
            w("| " + " | ".join(row) + " |")
        w("")
        w(f"Failures (out of 1000 pairs; proxima warm: out of 2000 queries) and max |d − d_ref| over pairs both call "
          f"separated; `overlap` = fraction of pairs the reference calls overlapping; `mean d` = mean reference distance "
          f"(overlapping pairs count as 0); `iters` = mean GJK iterations of proxima SV cold / warm.")
        w("")
        fcols = [("proxima", "proxima (worst variant)")] + [(k, l) for k, l, _ in present_peers]
        w("| N | overlap | mean d | iters cold / warm | " + " | ".join(l for _, l in fcols) + " |")
        w("|---:|---:|---:|---:|" + "---|" * len(fcols))
        for n in sizes:
            ov, md = None, None
            row = [str(n)]
            pf, pe = 0, 0.0
            for k, _ in POLY_PROXIMA:
                r = res.get(("icosphere", cfg, n, k))
                if r:
                    ov = r["overlap_frac"]
                    md = r.get("mean_d")
                    pf = max(pf, int(r["failures"] or 0))
                    pe = max(pe, r["max_err"] or 0.0)
            rc = res.get(("icosphere", cfg, n, proxima_cold_key(n)))
            rw = res.get(("icosphere", cfg, n, proxima_warm_key(n)))
            it = (f"{rc['iters']:.2f} / {rw['iters']:.2f}" if rc and rw and rc["iters"] is not None
                  and rw["iters"] is not None else "—")
            row += ["—" if ov is None else f"{ov:.3f}", "—" if md is None else f"{md:.3g}", it, f"{pf} ({fmt_err(pe)})"]
            for k, _, d in present_peers:
                r = res.get(("icosphere", cfg, n, k))
                if r is None:
                    row.append("—")
                elif d:
                    row.append(f"{int(r['failures'])} ({fmt_err(r['max_err'])})")
                else:
                    row.append(f"{int(r['failures'])}")
            w("| " + " | ".join(row) + " |")
        w("")

    # ---- ellipsoids -----------------------------------------------------------------------------
    if any(k[0] == "ellipsoid" for k in res):
        w("## Ellipsoids (radii 1, 0.6, 0.3): median ns per query")
        w("")
        cols = list(ELL_PROXIMA) + [(k, l) for k, l, _ in present_peers]
        w("| configuration | overlap | " + " | ".join(l for _, l in cols) + " | best peer / proxima cold | best peer / proxima warm |")
        w("|---|---:|" + "---:|" * len(cols) + "---:|---:|")
        for cfg, glabel in CONFIGS:
            r0 = res.get(("ellipsoid", cfg, 0, "proxima_sv_cold"))
            if r0 is None:
                continue
            row = [f"{cfg} (g = {glabel})", f"{r0['overlap_frac']:.3f}"]
            for k, _ in cols:
                row.append(fmt_ns(cell_time(res, ("ellipsoid", cfg, 0, k))))
            bp = best_peer(res, "ellipsoid", cfg, 0)
            c = cell_time(res, ("ellipsoid", cfg, 0, "proxima_sv_cold"))
            wm = cell_time(res, ("ellipsoid", cfg, 0, "proxima_sv_warm"))
            if bp:
                row.append(f"{fmt_ratio(bp[1] / c if c else None)} ({PEER_LABEL[bp[0]]})")
                row.append(fmt_ratio(bp[1] / wm if wm else None))
            else:
                row += ["—", "—"]
            w("| " + " | ".join(row) + " |")
        w("")
        w("Failures and max |d − d_ref| (ellipsoids). `ref vs g` = max |d_ref − g| over the separated configurations, "
          "a check of the reference itself (the exact distance is g; the reference is plain GJK, "
          "`GjkOptions::smoothNewton` off, so it does not share the Newton finish the proxima variants use); "
          "`iters` = mean GJK iterations plus Newton steps of proxima SV cold / SV warm / JN cold / JN warm "
          "(separated pairs are finished by Newton whatever the sub-algorithm, so SV and JN differ only "
          "before it starts and on overlapping pairs).")
        w("")
        fcols = list(ELL_PROXIMA) + [(k, l) for k, l, _ in present_peers]
        w("| configuration | ref vs g | iters | " + " | ".join(l for _, l in fcols) + " |")
        w("|---|---:|---:|" + "---|" * len(fcols))
        for cfg, glabel in CONFIGS:
            rc = res.get(("ellipsoid", cfg, 0, "proxima_sv_cold"))
            rw = res.get(("ellipsoid", cfg, 0, "proxima_sv_warm"))
            if rc is None:
                continue
            its = []
            for k, _ in ELL_PROXIMA:
                r = res.get(("ellipsoid", cfg, 0, k))
                its.append("—" if r is None or r["iters"] is None else f"{r['iters']:.1f}")
            re = rc.get("ref_exact_err") if float(glabel) > 0 else None
            row = [f"{cfg} (g = {glabel})", fmt_err(re), " / ".join(its)]
            for k, _ in ELL_PROXIMA:
                r = res.get(("ellipsoid", cfg, 0, k))
                row.append("—" if r is None else f"{int(r['failures'])} ({fmt_err(r['max_err'])})")
            for k, _, d in present_peers:
                r = res.get(("ellipsoid", cfg, 0, k))
                if r is None:
                    row.append("—")
                elif d:
                    row.append(f"{int(r['failures'])} ({fmt_err(r['max_err'])})")
                else:
                    row.append(f"{int(r['failures'])}")
            w("| " + " | ".join(row) + " |")
        w("")

    # ---- pole accuracy -------------------------------------------------------------------------
    rows = acc.get("rows", [])
    trials = acc.get("trials", "?")
    w("## Pole accuracy check (`proxima_bench_accuracy`)")
    w("")
    w(f"Icospheres rotated so that (±1, 0, 0) are vertices exactly; A and B rotated only about x (random angles, "
      f"{trials} trials per cell), A at the origin, B at x = 2 + g: the poles are the closest points and the exact "
      f"distance is fl(2 + g) − 2 (= g up to the rounding of the placement). Entries: maximum |d − exact| over the "
      f"trials; in brackets the number of failures (overlap reported, no result, or error > 1e-6·max(1, g)). "
      f"libccd only answers yes/no, so its entry is the number of trials it wrongly calls intersecting. "
      f"*axis*: as described — easy for any GJK whose first search direction is the line of centres, since both "
      f"poles lie on it. *rotated*: the same scene seen in a random frame (exact distance unchanged; poses no longer "
      f"axis-aligned, so the reference itself is uncertain by ~4e-16 from rounding the placement).")
    w("")
    methods = []
    for r in rows:
        if r["method"] not in methods:
            methods.append(r["method"])
    labels = {"proxima_sv": "proxima SV", "proxima_jn": "proxima JN", **PEER_LABEL}
    for variant in ["axis", "rotated"]:
        vr = [r for r in rows if r.get("variant", "axis") == variant]
        if not vr:
            continue
        w(f"### Pole check, {variant}")
        w("")
        w("| N | g | " + " | ".join(labels.get(m, m) for m in methods) + " |")
        w("|---:|---:|" + "---:|" * len(methods))
        cells = {(r["n"], r["gap"], r["method"]): r for r in vr}
        for n in sorted({r["n"] for r in vr}):
            for g in sorted({r["gap"] for r in vr}, reverse=True):
                row = [str(n), f"{g:g}"]
                for m in methods:
                    r = cells.get((n, g, m))
                    if r is None:
                        row.append("—")
                    elif r["distance"]:
                        s = fmt_err(r["max_abs_err"])
                        if r["failures"]:
                            s += f" ({r['failures']})"
                        row.append(s)
                    else:
                        row.append(f"({r['failures']})")
                w("| " + " | ".join(row) + " |")
        w("")

    return L


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", help="proxima_bench JSON (distance); omitted: keep the distance part of --out")
    ap.add_argument("--accuracy", help="proxima_bench_accuracy JSON (required with --bench)")
    ap.add_argument("--meta")
    ap.add_argument("--contact", help="proxima_bench_contact JSON; omitted: keep the Penetration section of --out")
    ap.add_argument("--contact-meta")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.bench and not args.accuracy:
        ap.error("--bench needs --accuracy")
    if not args.bench and not args.contact:
        ap.error("nothing to report: give --bench/--accuracy and/or --contact")

    old = ""
    if os.path.exists(args.out):
        with open(args.out) as f:
            old = f.read()
    dist = distance_lines(args) if args.bench else None
    pen = None
    if args.contact:
        cmeta = {}
        if args.contact_meta:
            with open(args.contact_meta) as f:
                cmeta = json.load(f)
        pen = report_contact.penetration_lines(args.contact, cmeta)
    text = report_contact.splice(old, dist, pen)
    with open(args.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
