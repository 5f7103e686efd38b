"""Scene definitions of the whole-simulation benchmark (python3, stdlib only).

One definition feeds every side of the comparison:
  * the initial state handed to the peers (LIGGGHTS / LAMMPS data file, Yade JSON), and
  * the proxima scenario files bench/sim/scenes/*.yaml (``python3 bench/sim/scenes.py --write``).

The protocol itself (what is settled, what is timed) is described in bench/peers/README.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# Physical parameters shared by all scenes (issue: E = 1e7 Pa, rho = 2500, e = 0.5, mu = 0.5,
# dt = 1.7e-5 s, d = 2 mm; Poisson's ratio chosen here: 0.3).
# ---------------------------------------------------------------------------------------------
DIAMETER = 0.002          # m (spheres; polyhedra: circumscribed diameter)
DENSITY = 2500.0          # kg/m^3
YOUNG = 1.0e7             # Pa
POISSON = 0.3
RESTITUTION = 0.5
FRICTION = 0.5
TIME_STEP = 1.7e-5        # s
GRAVITY = 9.81            # m/s^2, along -z
SKIN = 0.2 * DIAMETER     # Verlet skin (LIGGGHTS/LAMMPS `neighbor`), 0.4 mm
LATTICE_SPACING = 1.01 * DIAMETER  # insertion lattice, proxima's rule (1.01 x bounding diameter)
REGION_GAP = 0.001        # m, insertion region starts this far from the side walls and the floor
VELOCITY_JITTER = 0.01    # m/s, initial velocity uniform in the ball of this radius
SEED = 1


@dataclass
class Scene:
    name: str
    shape: str                 # "sphere", "polyhedron" or "ellipsoid" (proxima only)
    count: int
    base: float                # box base edge (m), box is [0, base]^2 x [0, height]
    settle_time: float         # simulated seconds run before the timed phase
    timed_steps: int           # steps in the timed phase
    height: float = 0.0        # box height; 0 = derived from the lattice
    wall_cap: float = 0.0      # polyhedra: wall-clock cap (s) of the whole peer run; 0 = none
    extra: dict = field(default_factory=dict)

    # -- lattice -------------------------------------------------------------------------
    # proxima's `method: lattice` rule (src/dem/builder.cpp): spacing s = 1.01 x the largest bounding
    # diameter, first site at region.min + r, sites per axis floor((extent - d) / s) + 1, filled x
    # fastest, then y, then z. The region is chosen here so that the lattice is the same on both sides.
    def lattice(self):
        """Cubic insertion lattice (proxima's rule): spacing s = 1.01 d; the region starts GAP = 1 mm
        from the side walls and the floor, so the first centre is at (GAP + d/2) = 2 mm;
        n = floor((base - 2 GAP - d) / s) + 1 sites per row; layers filled x fastest, then y, then z;
        the last layer may be partial."""
        s = LATTICE_SPACING
        n = int(math.floor((self.base - 2 * REGION_GAP - DIAMETER) / s + 1e-9)) + 1
        if n < 1:
            raise ValueError(f"{self.name}: base {self.base} too small")
        x0 = REGION_GAP + DIAMETER / 2
        per_layer = n * n
        layers = (self.count + per_layer - 1) // per_layer
        z0 = REGION_GAP + DIAMETER / 2
        return dict(spacing=s, per_row=n, x0=x0, z0=z0, layers=layers,
                    top=z0 + (layers - 1) * s)

    def box_height(self) -> float:
        if self.height > 0:
            return self.height
        top = self.lattice()["top"]
        return math.ceil((top + 5 * DIAMETER) * 100.0) / 100.0  # rounded up to a centimetre

    def region(self):
        """The proxima `region`: from GAP above the floor / beside the walls; its height holds
        exactly `layers` layers (half a spacing of slack)."""
        lat = self.lattice()
        lo = [REGION_GAP, REGION_GAP, REGION_GAP]
        hi = [self.base - REGION_GAP, self.base - REGION_GAP,
              REGION_GAP + DIAMETER + (lat["layers"] - 0.5) * lat["spacing"]]
        return lo, hi

    def initial_state(self):
        """Positions and velocities (lists of 3-tuples), deterministic in SEED."""
        lat = self.lattice()
        s, n, x0, z0 = lat["spacing"], lat["per_row"], lat["x0"], lat["z0"]
        rng = random.Random(SEED)
        pos, vel = [], []
        for i in range(self.count):
            layer, rem = divmod(i, n * n)
            iy, ix = divmod(rem, n)
            pos.append((x0 + ix * s, x0 + iy * s, z0 + layer * s))
        for _ in range(self.count):  # uniform in the ball of radius VELOCITY_JITTER (as proxima)
            while True:
                v = [rng.uniform(-1.0, 1.0) for _ in range(3)]
                if v[0] * v[0] + v[1] * v[1] + v[2] * v[2] <= 1.0:
                    break
            vel.append(tuple(VELOCITY_JITTER * c for c in v))
        return pos, vel

    @property
    def settle_steps(self) -> int:
        return int(round(self.settle_time / TIME_STEP))


def _hull_faces(pts):
    """Triangles (i, j, k) of the convex hull of a small point set, outward-oriented (brute force:
    a triple is a face if every other point lies on its inner side). Coplanar ties are split
    arbitrarily; enough for the centroid and volume of a generic point set."""
    def sub(a, b):
        return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]

    def cross(a, b):
        return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]

    def dot(a, b):
        return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]

    n = len(pts)
    scale = max(abs(c) for p in pts for c in p)
    eps = 1e-12 * scale ** 3
    faces = []
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                nrm = cross(sub(pts[j], pts[i]), sub(pts[k], pts[i]))
                side = [dot(nrm, sub(pts[m], pts[i])) for m in range(n) if m not in (i, j, k)]
                if all(x <= eps for x in side):
                    faces.append((i, j, k))
                elif all(x >= -eps for x in side):
                    faces.append((i, k, j))
    return faces


def hull_centroid_volume(pts):
    """Volume and centroid of the convex hull (sum of signed tetrahedra from the origin)."""
    vol, c = 0.0, [0.0, 0.0, 0.0]
    for i, j, k in _hull_faces(pts):
        a, b, d = pts[i], pts[j], pts[k]
        v = (a[0] * (b[1] * d[2] - b[2] * d[1]) - a[1] * (b[0] * d[2] - b[2] * d[0])
             + a[2] * (b[0] * d[1] - b[1] * d[0])) / 6.0
        vol += v
        for q in range(3):
            c[q] += v * (a[q] + b[q] + d[q]) / 4.0
    return vol, [x / vol for x in c]


def rock_vertices(nverts: int = 24, seed: int = 7, roughness: float = 0.15):
    """A 'rock' template: nverts points, Fibonacci-spread directions on the unit sphere with a
    seeded random perturbation of direction and radius (r in [1 - roughness, 1]), shifted so that
    the hull's centroid is the origin (proxima and Yade both put a polyhedron's frame there) and
    scaled so that the circumscribed radius about the centroid is exactly d/2 = 1 mm."""
    rng = random.Random(seed)
    pts = []
    golden = math.pi * (3.0 - math.sqrt(5.0))
    for k in range(nverts):
        z = 1.0 - 2.0 * (k + 0.5) / nverts
        rr = math.sqrt(max(0.0, 1.0 - z * z))
        th = golden * k + rng.uniform(-0.25, 0.25)
        v = [rr * math.cos(th), rr * math.sin(th), z + rng.uniform(-0.08, 0.08)]
        norm = math.sqrt(sum(c * c for c in v))
        r = rng.uniform(1.0 - roughness, 1.0)
        pts.append([c / norm * r for c in v])
    _, cen = hull_centroid_volume(pts)
    pts = [[p[q] - cen[q] for q in range(3)] for p in pts]
    rmax = max(math.sqrt(sum(c * c for c in p)) for p in pts)
    scale = (DIAMETER / 2) / rmax
    return [[round(c * scale, 9) for c in p] for p in pts]


# Full-size scenes (the issue's) and quick smoke-test variants.
def scenes(quick: bool = False, polyhedra_count: int | None = None):
    base10k = 20 * DIAMETER   # 40 mm
    base50k = 45 * DIAMETER   # 90 mm: bed height similar to the 10k one
    if not quick:
        out = {
            "spheres10k": Scene("spheres10k", "sphere", 10000, base10k, settle_time=0.5, timed_steps=5000,
                                height=0.12),
            "spheres50k": Scene("spheres50k", "sphere", 50000, base50k, settle_time=0.5, timed_steps=2000,
                                height=0.12),
            # polyhedra: same 20d x 20d box for every count (10k = the size); a thin bed for 1000.
            "polyhedra": Scene("polyhedra", "polyhedron", polyhedra_count or 10000, base10k, settle_time=0.5,
                               timed_steps=2000, height=0.12, wall_cap=300.0),
        }
    else:
        out = {
            "spheres10k": Scene("spheres10k", "sphere", 1000, base10k, settle_time=0.1, timed_steps=300,
                                height=0.12),
            "spheres50k": Scene("spheres50k", "sphere", 2000, base50k, settle_time=0.1, timed_steps=300,
                                height=0.12),
            "polyhedra": Scene("polyhedra", "polyhedron", polyhedra_count or 100, base10k, settle_time=0.01,
                               timed_steps=50, height=0.12, wall_cap=120.0),
        }
    return out


# ---------------------------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------------------------
def write_lammps_data(scene: Scene, path: str) -> None:
    """LAMMPS / LIGGGHTS data file (atom_style sphere / granular: id type diameter density x y z).
    The simulation box is 1 mm larger than the walls on every side (walls are fixes)."""
    pos, vel = scene.initial_state()
    pad = 0.5 * DIAMETER
    h = scene.box_height()
    with open(path, "w") as f:
        f.write(f"proxima benchmark scene {scene.name}: {scene.count} spheres\n\n")
        f.write(f"{scene.count} atoms\n1 atom types\n\n")
        f.write(f"{-pad:.6f} {scene.base + pad:.6f} xlo xhi\n")
        f.write(f"{-pad:.6f} {scene.base + pad:.6f} ylo yhi\n")
        f.write(f"{-pad:.6f} {h + pad:.6f} zlo zhi\n\n")
        f.write("Atoms\n\n")
        for i, p in enumerate(pos):
            f.write(f"{i + 1} 1 {DIAMETER:.6g} {DENSITY:.6g} {p[0]:.9f} {p[1]:.9f} {p[2]:.9f}\n")
        f.write("\nVelocities\n\n")
        for i, v in enumerate(vel):
            f.write(f"{i + 1} {v[0]:.9f} {v[1]:.9f} {v[2]:.9f} 0 0 0\n")


def scene_params(scene: Scene) -> dict:
    """Everything a peer script needs, as a JSON-able dict (Yade reads this)."""
    pos, vel = scene.initial_state()
    d = dict(name=scene.name, shape=scene.shape, count=scene.count, base=scene.base,
             height=scene.box_height(), diameter=DIAMETER, density=DENSITY, young=YOUNG, poisson=POISSON,
             restitution=RESTITUTION, friction=FRICTION, dt=TIME_STEP, gravity=GRAVITY, skin=SKIN,
             settle_steps=scene.settle_steps, timed_steps=scene.timed_steps, wall_cap=scene.wall_cap,
             positions=pos, velocities=vel, seed=SEED)
    if scene.shape == "polyhedron":
        d["vertices"] = rock_vertices()
    return d


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _sci(x: float) -> str:
    """1.0e7 style (no '+', no leading zeros in the exponent)."""
    m, e = f"{x:.1e}".split("e")
    return f"{m}e{int(e)}"


def _vec(v) -> str:
    return "[" + ", ".join(_fmt(c) for c in v) + "]"


def proxima_yaml(scene: Scene) -> str:
    lo, hi = scene.region()
    lat = scene.lattice()
    h = scene.box_height()
    lines = [
        f"# proxima whole-simulation benchmark scene '{scene.name}' (generated by bench/sim/scenes.py --write;",
        "# do not edit by hand). Protocol: bench/peers/README.md. Peers run the same particles, box,",
        "# materials, time step and settle-then-time protocol:",
        f"#   settle {scene.settle_time} s simulated ({scene.settle_steps} steps of {TIME_STEP} s), then time "
        f"{scene.timed_steps} steps;",
        f"#   report {scene.count} x {scene.timed_steps} / wall seconds of the timed steps (particle-steps/s).",
        f"# Insertion: proxima's lattice rule (spacing 1.01 x bounding diameter = {LATTICE_SPACING * 1e3:g} mm, "
        "first centre at region.min + r)",
        f"#   gives {lat['per_row']} x {lat['per_row']} per layer, {lat['layers']} layers, first centre at "
        f"({lat['x0']:.6g}, {lat['x0']:.6g}, {lat['z0']:.6g}) m,",
        "#   x fastest then y then z: the same positions as the peers' initial state.",
        "materials:",
        f"  - {{name: glass, density: {_fmt(DENSITY)}, youngs_modulus: {_sci(YOUNG)}, poisson_ratio: {POISSON}, "
        f"restitution: {RESTITUTION}, friction: {FRICTION}}}",
        "contact_model: hertz_mindlin",
        "templates:",
    ]
    if scene.shape == "sphere":
        lines.append(f"  - {{name: ball, shape: {{type: sphere, radius: {_fmt(DIAMETER / 2)}}}, material: glass}}")
        tmpl = "ball"
    elif scene.shape == "ellipsoid":
        # semi-axes 1 / 0.7 / 0.5 mm: the same 2 mm bounding diameter as the spheres and the rocks
        radii = [DIAMETER / 2, 0.7 * DIAMETER / 2, 0.5 * DIAMETER / 2]
        lines.append("  # 'grain': an ellipsoid of semi-axes 1 / 0.7 / 0.5 mm (bounding diameter 2 mm)")
        lines.append(f"  - {{name: grain, shape: {{type: ellipsoid, radii: {_vec(radii)}}}, material: glass}}")
        tmpl = "grain"
    else:
        pts = ", ".join(_vec(p) for p in rock_vertices())
        lines.append("  # 'rock': 24 perturbed points on a sphere, circumscribed diameter 2 mm (hulled by proxima)")
        lines.append(f"  - {{name: rock, shape: {{type: polytope, points: [{pts}]}}, material: glass}}")
        tmpl = "rock"
    lines += [
        "particles:",
        f"  - {{template: {tmpl}, method: lattice, count: {scene.count}, region: {{min: {_vec(lo)}, max: {_vec(hi)}}}, "
        f"velocity_jitter: {VELOCITY_JITTER}, seed: {SEED}}}",
        "walls:",
        f"  - {{type: box, name: box, min: [0, 0, 0], max: [{_fmt(scene.base)}, {_fmt(scene.base)}, {_fmt(h)}], "
        "open_top: true, material: glass}",
        f"gravity: [0, 0, {-GRAVITY}]",
        f"time: {{duration: {_fmt(scene.settle_time + scene.timed_steps * TIME_STEP)}, step: {TIME_STEP}}}",
        f"neighbours: {{skin: {_fmt(SKIN)}}}",
        "output: {directory: out, frame_interval: 0, csv_interval: 0.01, vtk: false}",
    ]
    return "\n".join(lines) + "\n"


def write_scene_files(directory: str) -> list:
    os.makedirs(directory, exist_ok=True)
    full = scenes(quick=False)
    targets = {"spheres10k.yaml": full["spheres10k"], "spheres50k.yaml": full["spheres50k"],
               "polyhedra10k.yaml": scenes(quick=False, polyhedra_count=10000)["polyhedra"],
               "polyhedra1k.yaml": scenes(quick=False, polyhedra_count=1000)["polyhedra"],
               # proxima only (no peer package has ellipsoid DEM): the polyhedra1k bed with ellipsoids
               "ellipsoids1k.yaml": Scene("ellipsoids", "ellipsoid", 1000, full["spheres10k"].base, settle_time=0.5,
                                          timed_steps=2000, height=0.12)}
    written = []
    for fname, sc in targets.items():
        p = os.path.join(directory, fname)
        with open(p, "w") as f:
            f.write(proxima_yaml(sc))
        written.append(p)
    return written


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="(re)write bench/sim/scenes/*.yaml")
    ap.add_argument("--show", action="store_true", help="print the scene geometry")
    a = ap.parse_args()
    if a.write:
        for p in write_scene_files(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenes")):
            print("wrote", p)
    if a.show or not a.write:
        for q in (False, True):
            for k, sc in scenes(quick=q).items():
                print("quick" if q else "full ", k, sc.count, "base", sc.base, "height", sc.box_height(),
                      sc.lattice(), "settle_steps", sc.settle_steps, "timed", sc.timed_steps)
