# Yade script of the proxima whole-simulation benchmark: spheres poured into an open box.
# Run by bench/sim/run_peers.py as
#   yade -j1 -n -x spheres.py SCENE.json RESULT.json
# SCENE.json (bench/sim/scenes.py: scene_params) holds the particles' initial positions and
# velocities, the box, the material and the step counts. The script settles for `settle_steps`
# steps, then times `timed_steps` steps (O.run(n, True) inside time.time()) and writes RESULT.json.
#
# Model: FrictMat (young E, poisson nu, density, frictionAngle = atan(mu)),
# Ip2_FrictMat_FrictMat_MindlinPhys(en = es = e): Hertz normal + Mindlin tangential stiffness with
# viscous damping calibrated to the restitution e (normal and tangential),
# Law2_ScGeom_MindlinPhys_Mindlin (Coulomb friction, no rolling moment), NewtonIntegrator with
# numerical damping 0 (the contact law dissipates), infinite Wall planes as the box (floor + 4 sides).
# Collider: InsertionSortCollider with verletDist = skin / 2 (bounds enlarged by skin/2 on each side,
# so a pair is detected within a gap of `skin` - the same list as LIGGGHTS/LAMMPS `neighbor skin`).
import json
import math
import sys
import time

from yade import *  # noqa: F401,F403  (inside yade this is already imported)

scene_file, result_file = sys.argv[1], sys.argv[2]
with open(scene_file) as f:
    P = json.load(f)

L, H = P["base"], P["height"]
R = P["diameter"] / 2
mat = O.materials.append(FrictMat(young=P["young"], poisson=P["poisson"], density=P["density"],
                                  frictionAngle=math.atan(P["friction"]), label="glass"))

walls = [
    utils.wall((0, 0, 0), axis=2, sense=1, material=mat),   # floor z = 0
    utils.wall((0, 0, 0), axis=0, sense=1, material=mat),   # x = 0
    utils.wall((L, 0, 0), axis=0, sense=-1, material=mat),  # x = L
    utils.wall((0, 0, 0), axis=1, sense=1, material=mat),   # y = 0
    utils.wall((0, L, 0), axis=1, sense=-1, material=mat),  # y = L
]
O.bodies.append(walls)
ids = []
for p, v in zip(P["positions"], P["velocities"]):
    b = utils.sphere(tuple(p), R, material=mat)
    b.state.vel = Vector3(*v)
    ids.append(O.bodies.append(b))

O.engines = [
    ForceResetter(),
    InsertionSortCollider([Bo1_Sphere_Aabb(), Bo1_Wall_Aabb()], verletDist=P["skin"] / 2),
    InteractionLoop(
        [Ig2_Sphere_Sphere_ScGeom(), Ig2_Wall_Sphere_ScGeom()],
        [Ip2_FrictMat_FrictMat_MindlinPhys(en=P["restitution"], es=P["restitution"])],
        [Law2_ScGeom_MindlinPhys_Mindlin()],
    ),
    NewtonIntegrator(damping=0.0, gravity=(0, 0, -P["gravity"])),
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
t0 = time.time()
chunk = 2000
done = 0
while done < settle:
    n = min(chunk, settle - done)
    O.run(n, True)
    done += n
    vm, ke, zm = diagnostics()
    print("settle step %d t=%.4f s vmax=%.4g ke=%.4g zmax=%.4g wall=%.1f s" % (O.iter, O.time, vm, ke, zm,
                                                                             time.time() - t0), flush=True)
settle_wall = time.time() - t0
vm0, ke0, zm0 = diagnostics()
t1, c1 = time.time(), time.process_time()
O.run(timed, True)
elapsed = time.time() - t1
cpu = time.process_time() - c1  # CPU time of the timed phase (all threads of the process)
vm1, ke1, zm1 = diagnostics()
inside = sum(1 for i in ids if -R < O.bodies[i].state.pos[2] < H and 0 <= O.bodies[i].state.pos[0] <= L
             and 0 <= O.bodies[i].state.pos[1] <= L)
res = dict(particles=len(ids), steps=timed, seconds=elapsed, particle_steps_per_s=len(ids) * timed / elapsed,
           settle_steps=settle, settle_seconds=settle_wall, vmax_start=vm0, vmax_end=vm1, ke_start=ke0,
           ke_end=ke1, bed_top=zm1, inside=inside, interactions=len([i for i in O.interactions if i.isReal]),
           cpu_seconds=cpu, timed_cpu_share=cpu / elapsed, particle_steps_per_cpu_s=len(ids) * timed / max(cpu, 1e-9))
print("RESULT " + json.dumps(res), flush=True)
with open(result_file, "w") as f:
    json.dump(res, f)
