# Yade script of the proxima whole-simulation benchmark, packing scene (Montanari thesis ch. 5 grain
# packing): convex rock grains in a box under a free lid, with Yade's Polyhedra module (CGAL), started
# from proxima's own state. Run by bench/sim/run_packing.py as
#   yade -j1 -f2 -n -x packing.py STATE.json RESULT.json [--timed-steps N] [--wall-cap S]
#        [--warmup-steps W] [--newton-damping D] [--chunk-seconds C]
# STATE.json is written by proxima_export_state (bench/sim/export_state.cpp) from a proxima checkpoint:
# the time step, gravity, Verlet skin, materials, every particle's world hull vertices, velocity and
# angular velocity, the walls (planes with origin and inward normal; the lid: mass > 0) and the
# container box.
#
# Set-up (the same state as proxima's at the checkpoint):
#   * one Polyhedra body per particle, built from its world vertices (Yade puts the body frame at the
#     hull centroid in the principal axes, so position and orientation follow from the vertices; the
#     mass is density x CGAL hull volume, checked against proxima's in the result: `mass_rel_diff_max`),
#     with proxima's velocity and angular velocity;
#   * the box floor and sides as Yade walls (utils.wall: infinite planes, one-sided towards the inside),
#     like polyhedra.py;
#   * the lid as a free Polyhedra slab over the container's footprint, its lower face at the lid plane,
#     its thickness mass / (density x footprint) (the scenes' 15 mm steel plate), its mass set to the
#     lid's exactly, moving along z only (blockedDOFs 'xyXYZ'), with proxima's lid velocity. Group masks
#     keep the lid and the walls from interacting (grains 7, walls 2, lid 4), as proxima's lid plane
#     does not touch the box either;
#   * gravity and the Verlet distance as proxima's (verletDist = skin / 2: Yade enlarges every bound by
#     verletDist, proxima compares a pair's gap with the skin).
#
# Model (as polyhedra.py): PolyhedraMat (young = E, poisson = nu, density, frictionAngle = atan(mu)) per
# material; Ig2_Polyhedra_Polyhedra_PolyhedraGeom + Ig2_Wall_Polyhedra_PolyhedraGeom,
# Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys, Law2_PolyhedraGeom_PolyhedraPhys_Volumetric (normal force
# kn x overlap volume with kn = the harmonic mean of the two `young`, shear stiffness `poisson` x that,
# Coulomb friction with the smaller friction angle). The law has no restitution parameter: the only
# dissipation is NewtonIntegrator's numerical damping, Yade's default 0.2 (`--newton-damping`). The
# volumetric law with young = E is a different (much softer) contact model than proxima's Hertz-Mindlin:
# the comparison is of the cost per step from the same state, not of the trajectories.
#
# Time step: proxima's, when Yade's own critical estimate for polyhedra allows it (the estimate of
# Yade's PWaveTimeStep for Polyhedra bodies, r_eq / sqrt(young r_eq / rho) with r_eq the volume-equivalent
# radius, minimum over the bodies, computed here because polyhedra_utils.PWaveTimeStep() of Yade
# 2023.02a returns its "nothing found" value 1.0 for these scenes; both are reported); otherwise half the
# estimate (the factor of Yade's polyhedra examples), with `dt_source: "yade"` in the result.
#
# Protocol: `--warmup-steps` (default 1) untimed steps first (the first step sorts the collider, creates
# every interaction and computes every candidate pair's intersection without a cached separating plane:
# several times a later step), then the timed phase: `--timed-steps` steps run in chunks (the first of
# one step, then sized to about `--chunk-seconds` of wall time) between time.time() / time.process_time()
# calls, stopped between chunks when the wall-clock cap `--wall-cap` (s, timed phase only) is reached
# (`capped: true`). After each chunk (outside the timing) the state is checked: a non-finite position,
# a grain faster than `--explode-speed` (default 5 m/s, twice the free-fall speed from the top of the
# box) or more than a grain size outside the box stops the run with `exploded: true`.
# The result reports particle-steps per wall second and per CPU second (process time of the timed
# chunks), the CPU share, the steps done, the contacts (interactions with an overlap volume > 0) and the
# lid height and largest speed at the start and the end.
import argparse
import json
import math
import sys
import time

from yade import *  # noqa: F401,F403
from yade import polyhedra_utils

ap = argparse.ArgumentParser()
ap.add_argument("state")
ap.add_argument("result")
ap.add_argument("--timed-steps", type=int, default=300)
ap.add_argument("--wall-cap", type=float, default=300.0)
ap.add_argument("--warmup-steps", type=int, default=1)
ap.add_argument("--newton-damping", type=float, default=0.2)
ap.add_argument("--chunk-seconds", type=float, default=10.0)
ap.add_argument("--explode-speed", type=float, default=5.0)
A = ap.parse_args(sys.argv[1:])

with open(A.state) as f:
    S = json.load(f)

GRAIN_MASK, WALL_MASK, LID_MASK = 7, 2, 4

mats = []
for m in S["materials"]:
    pm = PolyhedraMat(young=m["youngs_modulus"], poisson=m["poisson_ratio"], density=m["density"],
                      frictionAngle=math.atan(m["friction"]), label=m["name"])
    O.materials.append(pm)
    mats.append(pm)

# ---- grains ----
t_build = time.time()
ids = []
mass_diff = 0.0
for p in S["particles"]:
    if not p["vertices"]:
        raise SystemExit("particle %d has no polyhedral core: not a polyhedron" % p["id"])
    b = polyhedra_utils.polyhedra(mats[p["material"]], v=[Vector3(*v) for v in p["vertices"]], seed=1,
                                  mask=GRAIN_MASK)
    b.state.vel = Vector3(*p["velocity"])
    b.state.angVel = Vector3(*p["angular_velocity"])
    mass_diff = max(mass_diff, abs(b.state.mass - p["mass"]) / p["mass"])
    ids.append(O.bodies.append(b))
build_seconds = time.time() - t_build
n = len(ids)
max_grain = max(math.sqrt(max(sum((a - c) ** 2 for a, c in zip(v, p["position"])) for v in p["vertices"]))
                for p in S["particles"])

# ---- walls and lid ----
box = S.get("container")
walls_info, lid_id, lid_info = [], None, None
for w in S["walls"]:
    if w["kind"] != "plane":
        raise SystemExit("wall %s: only plane walls are supported" % w["name"])
    nrm = w["normal"]
    axis = max(range(3), key=lambda k: abs(nrm[k]))
    if any(abs(nrm[k]) > 1e-12 for k in range(3) if k != axis):
        raise SystemExit("wall %s: normal %s is not axis-aligned (Yade walls are)" % (w["name"], nrm))
    sense = 1 if nrm[axis] > 0 else -1
    if not w["lid"]:
        wid = O.bodies.append(utils.wall(Vector3(*w["origin"]), axis=axis, sense=sense, material=mats[w["material"]],
                                         mask=WALL_MASK))
        walls_info.append(dict(name=w["name"], axis=axis, sense=sense, position=w["origin"][axis], id=wid))
        continue
    if lid_id is not None:
        raise SystemExit("more than one lid")
    if axis != 2 or sense != -1:
        raise SystemExit("lid %s: expected a downward normal (0, 0, -1), got %s" % (w["name"], nrm))
    if box is None:
        raise SystemExit("lid %s: the state has no container box to take the lid's footprint from" % w["name"])
    lm = S["materials"][w["material"]]
    x0, y0 = box["min"][0], box["min"][1]
    x1, y1 = box["max"][0], box["max"][1]
    z0 = w["origin"][2]
    thick = w["mass"] / (lm["density"] * (x1 - x0) * (y1 - y0))
    corners = [Vector3(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z0 + thick)]
    lb = polyhedra_utils.polyhedra(mats[w["material"]], v=corners, seed=1, mask=LID_MASK)
    lb.state.mass = w["mass"]
    lb.state.blockedDOFs = "xyXYZ"
    lb.state.vel = Vector3(0, 0, -w["lid_speed"])  # lid_speed is along the (downward) normal
    lb.state.angVel = Vector3(0, 0, 0)
    lid_id = O.bodies.append(lb)
    lid_info = dict(name=w["name"], mass=w["mass"], thickness=thick, footprint=[x0, y0, x1, y1], z_start=z0,
                    speed_start=w["lid_speed"])

O.engines = [
    ForceResetter(),
    InsertionSortCollider([Bo1_Polyhedra_Aabb(), Bo1_Wall_Aabb()], verletDist=S["skin"] / 2),
    InteractionLoop(
        [Ig2_Polyhedra_Polyhedra_PolyhedraGeom(), Ig2_Wall_Polyhedra_PolyhedraGeom()],
        [Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys()],
        [Law2_PolyhedraGeom_PolyhedraPhys_Volumetric()],
    ),
    NewtonIntegrator(damping=A.newton_damping, gravity=Vector3(*S["gravity"])),
]

# ---- time step ----
yade_estimate = float("inf")
for b in O.bodies:
    if isinstance(b.shape, Polyhedra) and b.state.mass > 0:
        vol = b.shape.GetVolume()
        rho = b.state.mass / vol
        r_eq = (3 * vol / (4 * math.pi)) ** (1.0 / 3.0)
        yade_estimate = min(yade_estimate, r_eq / math.sqrt(b.material.young * r_eq / rho))
try:
    yade_pwave = float(polyhedra_utils.PWaveTimeStep())
except Exception as ex:  # noqa: BLE001
    yade_pwave = repr(ex)
proxima_dt = float(S["time_step"])
if proxima_dt <= yade_estimate:
    O.dt, dt_source = proxima_dt, "proxima"
else:
    O.dt, dt_source = 0.5 * yade_estimate, "yade"


def diagnostics():
    """Largest grain speed, kinetic energy, lid height and speed, grains outside the box, NaN check."""
    vmax, ke, outside, finite = 0.0, 0.0, 0, True
    for i in ids:
        st = O.bodies[i].state
        v2 = st.vel.squaredNorm()
        vmax = max(vmax, v2)
        ke += 0.5 * st.mass * v2
        x = st.pos
        if not all(math.isfinite(x[k]) for k in range(3)):
            finite = False
            continue
        if box is not None:
            for k in range(2):
                if x[k] < box["min"][k] - max_grain or x[k] > box["max"][k] + max_grain:
                    outside += 1
                    break
            else:
                if x[2] < box["min"][2] - max_grain:
                    outside += 1
    d = dict(vmax=math.sqrt(vmax), ke=ke, outside=outside, finite=finite)
    if lid_id is not None:
        ls = O.bodies[lid_id].state
        d.update(lid_z=ls.pos[2] - lid_info["thickness"] / 2, lid_speed=-ls.vel[2])
    return d


def contact_counts():
    real, touching, wall_touching = 0, 0, 0
    for i in O.interactions:
        if not i.isReal:
            continue
        real += 1
        g = i.geom
        if g is not None and getattr(g, "penetrationVolume", 0) > 0:
            if i.id1 in wall_ids or i.id2 in wall_ids or i.id1 == lid_id or i.id2 == lid_id:
                wall_touching += 1
            else:
                touching += 1
    return dict(interactions=real, contacts=touching, wall_contacts=wall_touching,
                coordination_number=2.0 * touching / n if n else 0.0)


wall_ids = {w["id"] for w in walls_info}
start = diagnostics()
t_w, p_w = time.time(), time.process_time()
O.run(A.warmup_steps, True)
warm_wall, warm_cpu = time.time() - t_w, time.process_time() - p_w
after_warmup = diagnostics()
after_warmup.update(contact_counts())
print("warm-up: %d steps in %.2f s; %d interactions, %d contacts (Z %.2f)" % (
    A.warmup_steps, warm_wall, after_warmup["interactions"], after_warmup["contacts"],
    after_warmup["coordination_number"]), flush=True)

chunks = []  # (steps, wall s, cpu s)
done, k, exploded, reason = 0, 1, False, None
t0 = time.time()
while done < A.timed_steps:
    if A.wall_cap > 0 and time.time() - t0 >= A.wall_cap:
        break
    k = max(1, min(k, A.timed_steps - done))
    c0, p0 = time.time(), time.process_time()
    O.run(k, True)
    cw, cc = time.time() - c0, time.process_time() - p0
    chunks.append((k, cw, cc))
    done += k
    d = diagnostics()
    print("timed step %d/%d t=%.5f s vmax=%.3g lid_z=%s wall=%.1f s  %.0f particle-steps/s (last chunk)" % (
        done, A.timed_steps, O.time, d["vmax"], ("%.5f" % d["lid_z"]) if "lid_z" in d else "-", time.time() - t0,
        n * k / max(cw, 1e-9)), flush=True)
    if not d["finite"]:
        exploded, reason = True, "non-finite grain position"
    elif d["vmax"] > A.explode_speed:
        exploded, reason = True, "grain speed %.3g m/s > %.3g m/s" % (d["vmax"], A.explode_speed)
    elif d["outside"] > 0:
        exploded, reason = True, "%d grains more than a grain size outside the box" % d["outside"]
    if exploded:
        print("EXPLODED: " + reason, flush=True)
        break
    k = max(1, int(k * A.chunk_seconds / max(cw, 1e-6)))

steps = sum(c[0] for c in chunks)
wall = sum(c[1] for c in chunks)
cpu = sum(c[2] for c in chunks)
end = diagnostics()
end.update(contact_counts())
res = dict(
    particles=n, build_seconds=build_seconds, mass_rel_diff_max=mass_diff,
    hull_vertices_max=max(len(O.bodies[i].shape.v) for i in ids),
    dt=O.dt, dt_source=dt_source, proxima_dt=proxima_dt, yade_dt_estimate=yade_estimate,
    yade_pwave_time_step=yade_pwave, verlet_dist=S["skin"] / 2, newton_damping=A.newton_damping,
    walls=walls_info, lid=lid_info,
    warmup_steps=A.warmup_steps, warmup_seconds=warm_wall, warmup_cpu_seconds=warm_cpu,
    timed_steps_target=A.timed_steps, steps=steps, seconds=wall, cpu_seconds=cpu,
    timed_cpu_share=cpu / wall if wall > 0 else None,
    particle_steps_per_s=n * steps / wall if wall > 0 else None,
    particle_steps_per_cpu_s=n * steps / cpu if cpu > 0 else None,
    # the last quarter of the chunks (the state furthest from the start)
    tail_particle_steps_per_cpu_s=(lambda t: n * sum(c[0] for c in t) / sum(c[2] for c in t)
                                   if t and sum(c[2] for c in t) > 0 else None)(chunks[len(chunks) - max(1, len(chunks) // 4):]),
    chunks=len(chunks), capped=steps < A.timed_steps and not exploded, wall_cap=A.wall_cap,
    exploded=exploded, explode_reason=reason,
    simulated_time_start=S["source"]["time"], simulated_time_run=O.time,
    start=start, after_warmup=after_warmup, end=end,
    proxima_stats=S.get("stats"))
print("RESULT " + json.dumps(res), flush=True)
with open(A.result, "w") as f:
    json.dump(res, f)
