# Yade script of the proxima whole-simulation benchmark: convex polyhedra ("rocks") poured into an
# open box, with Yade's Polyhedra module (CGAL). Run by bench/sim/run_peers.py as
#   yade -j1 -n -x polyhedra.py SCENE.json RESULT.json
# SCENE.json (bench/sim/scenes.py: scene_params) holds the lattice positions, the initial velocities,
# the rock template's vertices (24 points, circumscribed diameter 2 mm), the box, the material, the
# step counts and a wall-clock cap `wall_cap` (s).
#
# Protocol: like the spheres (settle `settle_steps`, then time `timed_steps`), but Yade's polyhedra
# are slow, so the run is cut at `wall_cap` seconds of wall time: the settle phase runs in chunks
# (sized to about 10 s of wall time each) and stops when the cap is reached; the timed phase runs
# only if time is left. The result reports the throughput over the whole run and over its last
# chunks (the densest state reached), the simulated time reached, the largest particle speed and
# whether the bed settled (only if the settle phase ran to its end).
#
# Model: PolyhedraMat (young E, poisson nu, density, frictionAngle = atan(mu));
# Ig2_Polyhedra_Polyhedra_PolyhedraGeom + Ig2_Wall_Polyhedra_PolyhedraGeom,
# Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys, Law2_PolyhedraGeom_PolyhedraPhys_Volumetric
# (normal force proportional to the overlap volume, Coulomb friction). That law has no restitution
# parameter: the only dissipation available is NewtonIntegrator's numerical damping, set to Yade's
# default 0.2 here (`newton_damping` in SCENE.json overrides it).
import json
import math
import random
import sys
import time

from yade import *  # noqa: F401,F403
from yade import polyhedra_utils

scene_file, result_file = sys.argv[1], sys.argv[2]
with open(scene_file) as f:
    P = json.load(f)

L, H = P["base"], P["height"]
R = P["diameter"] / 2
cap = float(P.get("wall_cap") or 0)
mat = PolyhedraMat(young=P["young"], poisson=P["poisson"], density=P["density"],
                   frictionAngle=math.atan(P["friction"]), label="rock")
O.materials.append(mat)
O.bodies.append([
    utils.wall((0, 0, 0), axis=2, sense=1, material=mat),
    utils.wall((0, 0, 0), axis=0, sense=1, material=mat),
    utils.wall((L, 0, 0), axis=0, sense=-1, material=mat),
    utils.wall((0, 0, 0), axis=1, sense=1, material=mat),
    utils.wall((0, L, 0), axis=1, sense=-1, material=mat),
])

verts = [Vector3(*v) for v in P["vertices"]]
rng = random.Random(P.get("seed", 1) + 1000)


def random_quaternion():
    # uniform random rotation (Shoemake)
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    return Quaternion(b * math.cos(2 * math.pi * u3), a * math.sin(2 * math.pi * u2),
                      a * math.cos(2 * math.pi * u2), b * math.sin(2 * math.pi * u3))


ids = []
t_build = time.time()
for p, v in zip(P["positions"], P["velocities"]):
    b = polyhedra_utils.polyhedra(mat, v=verts, seed=1)
    b.state.ori = random_quaternion() * b.state.ori
    b.state.pos = Vector3(*p)
    b.state.vel = Vector3(*v)
    ids.append(O.bodies.append(b))
build_seconds = time.time() - t_build
tmpl = O.bodies[ids[0]].shape
template_info = dict(hull_vertices=len(tmpl.v), volume=tmpl.GetVolume(),
                     volume_ratio_to_sphere=tmpl.GetVolume() / (4.0 / 3.0 * math.pi * R ** 3))

O.engines = [
    ForceResetter(),
    InsertionSortCollider([Bo1_Polyhedra_Aabb(), Bo1_Wall_Aabb()], verletDist=P["skin"] / 2),
    InteractionLoop(
        [Ig2_Polyhedra_Polyhedra_PolyhedraGeom(), Ig2_Wall_Polyhedra_PolyhedraGeom()],
        [Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys()],
        [Law2_PolyhedraGeom_PolyhedraPhys_Volumetric()],
    ),
    NewtonIntegrator(damping=float(P.get("newton_damping", 0.2)), gravity=(0, 0, -P["gravity"])),
]
O.dt = P["dt"]


def diagnostics():
    vmax, ke = 0.0, 0.0
    for i in ids:
        st = O.bodies[i].state
        v2 = st.vel.squaredNorm()
        vmax = max(vmax, v2)
        ke += 0.5 * st.mass * v2
    zmax = max(O.bodies[i].state.pos[2] for i in ids) + R
    return math.sqrt(vmax), ke, zmax


settle, timed = int(P["settle_steps"]), int(P["timed_steps"])
n = len(ids)
t0 = time.time()
chunks = []  # (steps, seconds)
chunk = 5  # first chunk; then sized to about CHUNK_SECONDS of wall time (the cap is checked between chunks)
CHUNK_SECONDS = 10.0


def left():
    return cap - (time.time() - t0) if cap > 0 else float("inf")


done = 0
last_print = 0.0
while done < settle and left() > 0:
    k = min(chunk, settle - done)
    c0, p0 = time.time(), time.process_time()
    O.run(k, True)
    chunks.append((k, time.time() - c0, time.process_time() - p0))
    done += k
    chunk = max(1, min(2000, int(k * CHUNK_SECONDS / max(chunks[-1][1], 1e-6))))
    if time.time() - last_print > 10 or done >= settle:
        last_print = time.time()
        vm, ke, zm = diagnostics()
        print("settle step %d t=%.4f s vmax=%.4g ke=%.4g zmax=%.4g wall=%.1f s  %.0f particle-steps/s (last chunk)"
              % (O.iter, O.time, vm, ke, zm, time.time() - t0, n * k / max(chunks[-1][1], 1e-9)), flush=True)

timed_done, timed_seconds, timed_cpu = 0, 0.0, 0.0
if done >= settle and left() > 0:
    # timed phase, also in chunks so that the cap holds
    tk = max(1, min(timed, chunk))
    while timed_done < timed and left() > 0:
        k = min(tk, timed - timed_done)
        c0, p0 = time.time(), time.process_time()
        O.run(k, True)
        timed_seconds += time.time() - c0
        timed_cpu += time.process_time() - p0
        timed_done += k
        tk = max(1, min(2000, int(k * CHUNK_SECONDS / max(time.time() - c0, 1e-6))))

total_steps = sum(c[0] for c in chunks) + timed_done
total_seconds = sum(c[1] for c in chunks) + timed_seconds
total_cpu = sum(c[2] for c in chunks) + timed_cpu
# "tail": the last quarter of the settle chunks (densest state reached in the settle phase)
tail = chunks[len(chunks) - max(1, len(chunks) // 4):] if chunks else []
tail_steps, tail_sec, tail_cpu = sum(c[0] for c in tail), sum(c[1] for c in tail), sum(c[2] for c in tail)
vm, ke, zm = diagnostics()
settled_threshold = float(P.get("settled_vmax", 0.05))
res = dict(
    particles=n, build_seconds=build_seconds, template=template_info,
    steps=timed_done if timed_done else total_steps,
    seconds=timed_seconds if timed_done else total_seconds,
    particle_steps_per_s=(n * timed_done / timed_seconds) if timed_done else (n * total_steps / max(total_seconds, 1e-9)),
    timed_phase_reached=bool(timed_done), timed_steps_done=timed_done, timed_seconds=timed_seconds,
    total_steps=total_steps, total_seconds=total_seconds,
    overall_particle_steps_per_s=n * total_steps / max(total_seconds, 1e-9),
    total_cpu_seconds=total_cpu, cpu_seconds=timed_cpu if timed_done else total_cpu,
    particle_steps_per_cpu_s=(n * timed_done / max(timed_cpu, 1e-9)) if timed_done else (n * total_steps / max(total_cpu, 1e-9)),
    tail_particle_steps_per_cpu_s=(n * tail_steps / tail_cpu) if tail_cpu > 0 else None,
    tail_particle_steps_per_s=(n * tail_steps / tail_sec) if tail_sec > 0 else None,
    simulated_time=O.time, settle_steps_target=settle, settle_steps_done=done, capped=left() <= 0,
    # settled only if the settle phase ran to its end and nothing moves faster than the threshold
    # (a run cut by the cap in the first milliseconds has small speeds because the fall has just begun)
    vmax_end=vm, ke_end=ke, bed_top=zm, settled=(done >= settle and vm < settled_threshold),
    settled_vmax_threshold=settled_threshold,
    interactions=len([i for i in O.interactions if i.isReal]),
    newton_damping=float(P.get("newton_damping", 0.2)))
print("RESULT " + json.dumps(res), flush=True)
with open(result_file, "w") as f:
    json.dump(res, f)
