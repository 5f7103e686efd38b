#!/usr/bin/env python3
"""Markdown table of run_peers.py results (stdlib only).

  python3 bench/sim/peer_table.py peers.json [more.json ...]
"""

import json
import sys


def fmt_rate(x):
    if not x:
        return "–"
    return f"{x / 1e6:.2f} M" if x >= 1e5 else f"{x / 1e3:.1f} k"


def main(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += json.load(f).get("results", [])
    print("| scene | peer | particles | timed steps | wall s | particle-steps/s (wall) | CPU share | "
          "particle-steps/CPU-s | peak RSS MB | settled (vmax m/s) | version | status |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
    for r in rows:
        share = r.get("timed_cpu_share")
        vmax = r.get("vmax_start", r.get("vmax_end"))
        settled = "–" if "settled" not in r else ("yes" if r["settled"] else "no")
        if vmax is not None:
            settled += f" ({vmax:.3g})"
        steps = r.get("steps")
        if steps is not None and r.get("timed_phase_reached") is False:
            steps = f"{steps} (capped at {r.get('simulated_time', 0):.4f} s simulated)"
        version = (r.get("version") or r.get("package_version") or "–").split(",")[0]
        cells = [
            r.get("scene", "?") + (" (quick)" if r.get("quick") else ""),
            r.get("peer", "?"),
            r.get("particles", "–"),
            steps if steps is not None else "–",
            f"{r['seconds']:.1f}" if r.get("seconds") else "–",
            fmt_rate(r.get("particle_steps_per_s")),
            f"{share:.0%}" if share else "–",
            fmt_rate(r.get("particle_steps_per_cpu_s")),
            f"{r['peak_rss_mb']:.0f}" if r.get("peak_rss_mb") else "–",
            settled,
            version,
            r.get("status", "?"),
        ]
        print("| " + " | ".join(str(c) for c in cells) + " |")

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
