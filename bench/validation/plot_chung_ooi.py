#!/usr/bin/env python3
"""Plots of the Chung & Ooi (2011) benchmark sweeps written by proxima_chung_ooi.

    build/bench/validation/proxima_chung_ooi /tmp/chung_ooi
    /usr/bin/python3 bench/validation/plot_chung_ooi.py /tmp/chung_ooi docs/img

Writes chung_ooi_force_time.png (tests 1-2), chung_ooi_restitution.png (test 3) and
chung_ooi_oblique.png (test 4) into the output directory (default docs/img).
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def hertz_universal_curve(n=20000):
    """Normalised Hertz impact: y'' = -(5/4) y^(3/2), y(0) = 0, y'(0) = 1 (y = overlap / max overlap,
    time in units of max overlap / impact speed). Returns (t / contact time, F / Fmax), by RK4."""
    def acc(y):
        return -1.25 * max(y, 0.0) ** 1.5

    h = 4.0 / n
    t, y, v = 0.0, 0.0, 1.0
    ts, fs = [0.0], [0.0]
    while True:
        k1y, k1v = v, acc(y)
        k2y, k2v = v + 0.5 * h * k1v, acc(y + 0.5 * h * k1y)
        k3y, k3v = v + 0.5 * h * k2v, acc(y + 0.5 * h * k2y)
        k4y, k4v = v + h * k3v, acc(y + h * k3y)
        y += h / 6 * (k1y + 2 * k2y + 2 * k3y + k4y)
        v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        t += h
        if y <= 0:
            break
        ts.append(t)
        fs.append(y ** 1.5)
    ts.append(t)
    fs.append(0.0)
    return [x / t for x in ts], fs


def plot_force_time(rows, out):
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ts, fs = hertz_universal_curve()
    ax.plot(ts, fs, "k-", lw=3, alpha=0.25, label="Hertz theory (normalised)")
    styles = {"glass": "o", "limestone": "s", "aluminium alloy": "^", "magnesium alloy": "v"}
    for name, marker in styles.items():
        sel = [r for r in rows if r["material"] == name]
        if not sel:
            continue
        sel = sel[:: max(1, len(sel) // 40)]
        test = sel[0]["test"]
        ax.plot([float(r["t_over_tc"]) for r in sel], [float(r["force_over_fmax"]) for r in sel], marker,
                ms=4, mfc="none", label=f"test {test}: {name}")
    ax.set_xlabel("t / t_c (Hertz)")
    ax.set_ylabel("F / F_max (Hertz)")
    ax.set_title("Chung & Ooi tests 1-2: elastic normal impact")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)


def plot_restitution(rows, out):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    ax.plot([0, 1], [0, 1], "k-", lw=1, alpha=0.5, label="e_out = e_in")
    markers = {"0.39": "o", "3.9": "s", "39": "^"}
    colours = {"aluminium oxide": "C0", "cast iron": "C1"}
    sizes = {"aluminium oxide": 8, "cast iron": 4}  # the two materials coincide: draw the first larger
    for mat, colour in colours.items():
        for speed, marker in markers.items():
            sel = [r for r in rows if r["material"] == mat and r["model"] == "hertz_mindlin" and r["impact_speed"] == speed]
            x = [float(r["e_in"]) for r in sel]
            ax.plot(x, [float(r["e_out"]) for r in sel], marker, color=colour, mfc="none", ms=sizes[mat],
                    label=f"{mat}, Hertz, {speed} m/s")
            ax2.semilogy(x, [max(float(r["rel_error"]), 1e-12) for r in sel], marker + "-", color=colour, mfc="none",
                         ms=sizes[mat], lw=0.5)
        sel = [r for r in rows if r["material"] == mat and r["model"] == "linear"]
        x = [float(r["e_in"]) for r in sel]
        ax.plot(x, [float(r["e_out"]) for r in sel], "x", color=colour, ms=sizes[mat] + 1,
                label=f"{mat}, linear, 3.9 m/s")
        ax2.semilogy(x, [max(float(r["rel_error"]), 1e-12) for r in sel], "x--", color=colour, ms=sizes[mat] + 1,
                     lw=0.5)
    ax.set_xlabel("input restitution e")
    ax.set_ylabel("rebound / impact speed")
    ax.set_title("Chung & Ooi test 3: sphere on a rigid wall")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax2.axhline(0.01, color="r", lw=1, ls=":", label="1% (test bound)")
    ax2.set_xlabel("input restitution e")
    ax2.set_ylabel("|e_out - e| / e")
    ax2.set_title("relative error (both materials and all speeds coincide)")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)


def plot_oblique(rows, out):
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    mu, e = 0.092, 0.98
    transition = math.degrees(math.atan(3.5 * mu * (1 + e)))
    hm = [r for r in rows if r["model"] == "hertz_mindlin"]
    lin = [r for r in rows if r["model"] == "linear"]
    ang = [float(r["angle_deg"]) for r in hm]
    specs = [
        ("et_dem", "et_rigid", "tangential restitution of the centre v_t'/v_t"),
        ("spin_dem", "spin_rigid", "rebound spin ω (rad/s)"),
        ("contact_point_et_dem", None, "tangential restitution of the contact point"),
    ]
    for ax, (key, rigid, label) in zip(axes, specs):
        if rigid:
            ax.plot(ang, [float(r[rigid]) for r in hm], "k-", lw=2, alpha=0.4, label="rigid body (Coulomb)")
        else:
            rigid_cp = [0.0 if r["regime_rigid"] == "stick" else float(r["et_rigid"]) - 2.5 * (1 - float(r["et_rigid"]))
                        for r in hm]
            ax.plot(ang, rigid_cp, "k-", lw=2, alpha=0.4, label="rigid body (Coulomb)")
        ax.plot(ang, [float(r[key]) for r in hm], "o", ms=3, color="C0", label="proxima Hertz-Mindlin")
        ax.plot([float(r["angle_deg"]) for r in lin], [float(r[key]) for r in lin], "x", ms=3, color="C3",
                label="proxima linear (k_t = 2/7 k_n)")
        ax.axvline(transition, color="gray", ls=":", lw=1)
        ax.set_xlabel("impact angle from the normal (deg)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[1].set_title(f"Chung & Ooi test 4: Al2O3, |v| = 3.9 m/s, μ = {mu}, e = {e} (stick/slide at {transition:.1f}°)",
                      fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join("docs", "img")
    os.makedirs(dst, exist_ok=True)
    plot_force_time(read(os.path.join(src, "force_time.csv")), os.path.join(dst, "chung_ooi_force_time.png"))
    plot_restitution(read(os.path.join(src, "restitution_in_vs_out.csv")), os.path.join(dst, "chung_ooi_restitution.png"))
    plot_oblique(read(os.path.join(src, "oblique.csv")), os.path.join(dst, "chung_ooi_oblique.png"))
    for name in ("chung_ooi_force_time.png", "chung_ooi_restitution.png", "chung_ooi_oblique.png"):
        print("wrote", os.path.join(dst, name))


if __name__ == "__main__":
    main()
