#!/usr/bin/env python3
"""Contract tests of `proxima distance` and `proxima contact` (single pair, --batch FILE, --batch -,
errors, round-trip, methods).

Usage: test_cli.py PATH_TO_PROXIMA   (run from the repository root)
"""
import json
import math
import os
import subprocess
import sys
import tempfile

EXE = sys.argv[1]
KEYS = {"status", "distance", "witness_a", "witness_b", "normal", "iterations"}
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def run(args, stdin=None, cmd="distance"):
    p = subprocess.run([EXE, cmd, *args], input=stdin, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


# Built-in examples when no input is given.
rc, out, err = run([])
lines = out.strip().splitlines()
check("builtin runs", rc == 0 and len(lines) == 3, f"rc={rc} lines={len(lines)} err={err}")
for ln in lines:
    r = json.loads(ln)
    check("builtin keys", KEYS <= r.keys(), r)
    check("builtin status", r["status"] == "separated", r)

# Single pair from a file.
rc, out, _ = run(["examples/pair_sphere_box.json"])
r = json.loads(out)
check("single rc", rc == 0)
check("single keys", KEYS <= r.keys(), r)
check("sphere-box distance", abs(r["distance"] - 0.25) < 1e-15, r)
check("normal unit A->B", abs(math.dist(r["normal"], [0, 0, 1])) < 1e-15, r)

# Mesh files, resolved relative to the pair file.
rc, out, _ = run(["examples/pair_meshes.json"])
r = json.loads(out)
check("mesh pair", rc == 0 and r["status"] == "separated" and r["distance"] > 0, r)

# Batch file: one result per line, in order, errors do not stop the batch.
rc, out, _ = run(["--batch", "examples/pairs.jsonl"])
res = [json.loads(x) for x in out.strip().splitlines()]
check("batch count", len(res) == 6, len(res))
check("batch order", [x.get("id") for x in res] == [1, 2, 3, 4, 5, 6], [x.get("id") for x in res])
check("batch triangle-point", abs(res[3]["distance"] - 1e-9) < 1e-22, res[3])
check("batch overlap", res[4]["status"] == "overlapping" and res[4]["distance"] == 0, res[4])
check("batch invalid radius", res[5]["status"] == "invalid_input" and "a.radius" in res[5]["message"], res[5])

# Malformed lines, unknown keys, unknown types, bad quaternions, via standard input.
bad = "\n".join([
    '{"a": {"type": "point"}, "b": {"type": "point", "position": [0.1, 0, 0]}}',
    '{"a": {"type": "point"', 
    '{"a": {"type": "sphere", "radius": 1, "colour": "red"}, "b": {"type": "point"}}',
    '{"a": {"type": "blob"}, "b": {"type": "point"}}',
    '{"a": {"type": "point"}, "b": {"type": "point", "orientation": [1, 1, 0, 0]}}',
    '{"a": {"type": "polytope", "points": []}, "b": {"type": "point"}}',
    '{"a": {"type": "box", "half_extents": [1, "x", 1]}, "b": {"type": "point"}}',
    '{"a": {"type": "mesh", "file": "no/such/file.obj"}, "b": {"type": "point"}}',
    '{"a": {"type": "point"}}',
    '{"a": {"type": "point"}, "b": {"type": "point", "position": [0.30000000000000004, 0, 0]}}',
]) + "\n"
rc, out, _ = run(["--batch", "-"], stdin=bad)
res = [json.loads(x) for x in out.strip().splitlines()]
check("stdin count", len(res) == 10, len(res))
check("stdin ok line", res[0]["status"] == "separated" and res[0]["distance"] == 0.1, res[0])
check("malformed json", res[1]["status"] == "invalid_input" and "line 2" in res[1]["message"], res[1])
check("unknown key", res[2]["status"] == "invalid_input" and "a.colour" in res[2]["message"], res[2])
check("unknown type", res[3]["status"] == "invalid_input" and "a.type" in res[3]["message"], res[3])
check("non-unit quaternion", res[4]["status"] == "invalid_input" and "b.orientation" in res[4]["message"], res[4])
check("empty polytope", res[5]["status"] == "invalid_input" and "a.points" in res[5]["message"], res[5])
check("non-number", res[6]["status"] == "invalid_input" and "a.half_extents[1]" in res[6]["message"], res[6])
check("missing mesh", res[7]["status"] == "invalid_input" and "a.file" in res[7]["message"], res[7])
check("missing b", res[8]["status"] == "invalid_input" and "b" in res[8]["message"], res[8])
# Numbers round-trip: 0.1 + 0.2 prints as 0.30000000000000004 and parses back to the same double.
check("round trip", res[9]["distance"] == 0.1 + 0.2, res[9])

# A single invalid pair file exits with status 1 and still prints a JSON result.
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "bad.json")
    with open(path, "w") as f:
        f.write('{"a": {"type": "sphere", "radius": -2}, "b": {"type": "point"}}')
    rc, out, _ = run([path])
    check("invalid exit code", rc == 1 and json.loads(out)["status"] == "invalid_input", (rc, out))
    # Many pairs in one process, all answered in order.
    path = os.path.join(d, "many.jsonl")
    with open(path, "w") as f:
        for i in range(2000):
            f.write(json.dumps({"id": i, "a": {"type": "sphere", "radius": 1},
                                "b": {"type": "sphere", "radius": 1, "position": [2 + i * 1e-3, 0, 0]}}) + "\n")
    rc, out, _ = run(["--batch", path])
    res = [json.loads(x) for x in out.strip().splitlines()]
    check("many count", len(res) == 2000, len(res))
    check("many values", all(abs(r["distance"] - i * 1e-3) < 1e-14 and r["id"] == i for i, r in enumerate(res)))

# ---- proxima contact ----
CKEYS = KEYS | {"depth", "contact_point", "contacts", "expansions", "method"}
rc, out, err = run([], cmd="contact")
lines = [json.loads(x) for x in out.strip().splitlines()]
check("contact builtin runs", rc == 0 and len(lines) == 3, (rc, err))
for r in lines:
    check("contact builtin keys", CKEYS <= r.keys(), r)
    check("contact builtin overlapping", r["status"] == "overlapping" and r["depth"] > 0, r)
check("stacked boxes 4 contacts", len(lines[0]["contacts"]) == 4 and abs(lines[0]["depth"] - 0.01) < 1e-14, lines[0])
check("edge on face 2 contacts", len(lines[1]["contacts"]) == 2, lines[1])
check("sphere in box depth", abs(lines[2]["depth"] - 0.3) < 1e-14 and lines[2]["normal"] == [0.0, 0.0, 1.0], lines[2])

boxes = {"a": {"type": "box", "half_extents": [1, 1, 1]},
         "b": {"type": "box", "half_extents": [1, 1, 1], "position": [1.9, 0.3, 0.2],
               "orientation": [0.9950041652780258, 0.09983341664682815, 0, 0]}}
sep = {"id": "apart", "a": {"type": "sphere", "radius": 1}, "b": {"type": "sphere", "radius": 1, "position": [3, 0, 0]}}
lines_in = "\n".join(json.dumps(x) for x in [dict(boxes, id="boxes"), sep, {"id": 7, "a": {"type": "sphere"}}]) + "\n"
rc, out, _ = run(["--batch", "-"], stdin=lines_in, cmd="contact")
res = [json.loads(x) for x in out.strip().splitlines()]
check("contact batch count", len(res) == 3, res)
check("contact batch depth", res[0]["status"] == "overlapping" and abs(res[0]["depth"] - 0.1) < 1e-14, res[0])
check("contact depth = -distance", res[0]["depth"] == -res[0]["distance"], res[0])
check("contact normal unit", abs(math.hypot(*res[0]["normal"]) - 1) < 1e-15, res[0])
check("contact point midpoint", all(abs(res[0]["contact_point"][i] - 0.5 * (res[0]["witness_a"][i] + res[0]["witness_b"][i])) < 1e-15 for i in range(3)), res[0])
check("contact separated", res[1]["status"] == "separated" and res[1]["depth"] == 0 and res[1]["contacts"] == [] and res[1]["distance"] == 1, res[1])
check("contact invalid", res[2]["status"] == "invalid_input" and "b" in res[2]["message"] and res[2]["id"] == 7, res[2])
for method in ["nezami", "cundall"]:
    rc, out, _ = run(["--batch", "-", "--method", method], stdin=json.dumps(boxes) + "\n", cmd="contact")
    r = json.loads(out)
    check(f"{method} agrees", r["status"] == "overlapping" and abs(r["depth"] - 0.1) < 1e-9 and r["method"] == method, r)
rc, out, _ = run(["--batch", "-", "--method", "nezami"], stdin=json.dumps(sep) + "\n", cmd="contact")
r = json.loads(out)
check("nezami needs polyhedra", r["status"] == "invalid_input" and "a:" in r["message"] and r["method"] == "nezami", r)
rc, out, err = run(["--method", "bogus"], cmd="contact")
check("bad method rejected", rc != 0 and "method" in err, (rc, err))

# Reviewed defects (2026-11-26): none of these may crash, and each names the line or the path.
over = '{"a": {"type": "sphere", "radius": 1e400}, "b": {"type": "point"}}'
good = json.dumps(sep)
rc, out, err = run(["--batch", "-"], stdin=good + "\n" + over + "\n" + good + "\n", cmd="contact")
res = [json.loads(x) for x in out.strip().splitlines()]
check("1e400 does not abort the batch", rc == 0 and len(res) == 3 and res[2]["status"] == "separated", (rc, err, res))
check("1e400 names the line", res[1]["status"] == "invalid_input" and res[1]["message"].startswith("line 2:"), res[1])
check("invalid contact result has the contact keys", CKEYS <= res[1].keys() and res[1]["depth"] is None and res[1]["contacts"] == [], res[1])
# What nlohmann's parser accepts silently is refused by name: a key given twice (it kept the last)
# and a number that underflows to 0 (a point polytope instead of a tetrahedron, a radius of 0).
dup = '{"a": {"type": "sphere", "radius": 1, "radius": 2}, "b": {"type": "point"}}'
tiny = '{"a": {"type": "sphere", "radius": 1}, "b": {"type": "polytope", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, -1e-400]]}}'
sub = '{"a": {"type": "sphere", "radius": 1}, "b": {"type": "point", "position": [0, 0, 5e-324]}}'
zero = '{"a": {"type": "sphere", "radius": 1}, "b": {"type": "point", "position": [0.0e-400, 0, 2]}}'
rc, out, err = run(["--batch", "-"], stdin="\n".join([dup, tiny, sub, zero, good]) + "\n", cmd="contact")
res = [json.loads(x) for x in out.strip().splitlines()]
check("strict JSON: one result per line", rc == 0 and len(res) == 5 and res[4]["status"] == "separated", (rc, err, res))
check("duplicate key named", res[0]["status"] == "invalid_input" and res[0]["message"] == "line 1: malformed JSON: a.radius: duplicate key", res[0])
check("underflow named", res[1]["status"] == "invalid_input" and res[1]["message"].startswith("line 2: malformed JSON: b.points[3][2]: the number -1e-400 is too small"), res[1])
check("subnormal accepted", res[2]["status"] == "overlapping", res[2])
check("zero with a big exponent accepted", res[3]["status"] == "separated", res[3])
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "dup.json")
    with open(path, "w") as f:
        f.write('{"a": {"type": "sphere", "radius": 1}, "b": {"type": "point"}, "a": {"type": "point"}}')
    rc, out, _ = run([path])
    r = json.loads(out)
    check("duplicate top-level key in a pair file", rc == 1 and r["message"] == path + ": malformed JSON: a: duplicate key", (rc, r))
bad = '{"a": {"type": "box", "half_extents": [1, -1, 1]}, "b": {"type": "point"}}'
rc, out, _ = run(["--batch", "-"], stdin=good + "\n" + bad + "\n", cmd="contact")
res = [json.loads(x) for x in out.strip().splitlines()]
check("field error names the batch line", res[1]["message"].startswith("line 2: a.half_extents[1]") and "(got -1" in res[1]["message"], res[1])
with tempfile.TemporaryDirectory() as d:
    for args in ([d], ["--batch", d]):
        rc, out, err = run(args, cmd="contact")
        check(f"directory {args[0]} refused", rc == 2 and "directory" in err, (rc, out, err))
    path = os.path.join(d, "over.json")
    with open(path, "w") as f:
        f.write(over)
    rc, out, _ = run([path], cmd="contact")
    check("1e400 pair file", rc == 1 and json.loads(out)["status"] == "invalid_input", (rc, out))
far = {"a": {"type": "box", "half_extents": [1, 1, 1], "position": [-1e308, 0, 0]}, "b": {"type": "box", "half_extents": [1, 1, 1], "position": [1e308, 0, 0]}}
rc, out, _ = run(["--batch", "-"], stdin=json.dumps(far) + "\n", cmd="contact")
r = json.loads(out)
check("coordinates beyond 1e150 refused", r["status"] == "invalid_input" and "a.position[0]" in r["message"], r)
# The supported range is 1e60 (at 1e78 a box-ellipsoid distance came out 2e78 instead of 1e78).
big = {"a": {"type": "box", "half_extents": [1e61, 1, 1]}, "b": {"type": "ellipsoid", "radii": [1, 1, 1], "position": [3e61, 0, 0]}}
rc, out, _ = run(["--batch", "-"], stdin=json.dumps(big) + "\n")
r = json.loads(out)
check("sizes beyond 1e60 refused", r["status"] == "invalid_input" and "a.half_extents[0]" in r["message"] and "1e60" in r["message"], r)
ok = {"a": {"type": "box", "half_extents": [1e59, 1e59, 1e59]}, "b": {"type": "ellipsoid", "radii": [1e59, 1e59, 1e59], "position": [3e59, 0, 0]}}
rc, out, _ = run(["--batch", "-"], stdin=json.dumps(ok) + "\n")
r = json.loads(out)
check("sizes of 1e59 answered exactly", r["status"] == "separated" and abs(r["distance"] - 1e59) <= 1e-12 * 1e59, r)
# Touching bodies are in contact (depth 0) for every shape and method, and no "-0.0" is printed.
touch = {"a": {"type": "sphere", "radius": 1}, "b": {"type": "sphere", "radius": 1, "position": [2, 0, 0]}}
tbox = {"a": {"type": "box", "half_extents": [1, 1, 1]}, "b": {"type": "box", "half_extents": [0.5, 0.5, 0.5], "position": [0, 0, 1.5]}}
for pair, methods in ((touch, ["gjk-td"]), (tbox, ["gjk-td", "nezami", "cundall"])):
    for method in methods:
        rc, out, _ = run(["--batch", "-", "--method", method], stdin=json.dumps(pair) + "\n", cmd="contact")
        r = json.loads(out)
        check(f"touching {pair['a']['type']} {method}", r["status"] == "overlapping" and r["depth"] == 0 and "-0.0" not in out, out)
# Common-plane witnesses face each other across the contact (not two buried corners).
face = {"a": {"type": "box", "half_extents": [1, 1, 1]}, "b": {"type": "box", "half_extents": [0.5, 0.5, 0.5], "position": [0, 0, 1.4]}}
for method in ["nezami", "cundall"]:
    rc, out, _ = run(["--batch", "-", "--method", method], stdin=json.dumps(face) + "\n", cmd="contact")
    r = json.loads(out)
    check(f"{method} contact point", math.dist(r["contact_point"], [0, 0, 0.95]) < 1e-9, r)
    check(f"{method} witness_a - witness_b = depth n", math.dist([a - b for a, b in zip(r["witness_a"], r["witness_b"])], [r["depth"] * x for x in r["normal"]]) < 1e-12, r)

# Review 2026-11-27: input that crashed the program.
# Bytes that are not UTF-8 on a batch line: that line is invalid_input, the batch goes on.
good = json.dumps({"a": {"type": "sphere", "radius": 1}, "b": {"type": "point"}}).encode()
raw = good + b"\n" + b'{"a":{"type":"sph\xffere","radius":1},"b":{"type":"point"}}\n' + good + b"\n"
p = subprocess.run([EXE, "contact", "--batch", "-"], input=raw, capture_output=True, timeout=120)
res = [json.loads(x) for x in p.stdout.decode().strip().splitlines()]
check("non-UTF-8 line: no crash, the batch goes on", p.returncode == 0 and len(res) == 3, (p.returncode, p.stderr[-300:]))
check("non-UTF-8 line named", len(res) == 3 and res[1]["status"] == "invalid_input" and res[1]["message"].startswith("line 2:")
      and res[2]["status"] == "overlapping", res)
# A 200 kB line of nested brackets (it overflowed the stack when the id was echoed).
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "deep.json")
    with open(path, "w") as f:
        f.write('{"id":' + "[" * 100000 + "]" * 100000 + ',"a":{"type":"point"},"b":{"type":"point"}}')
    rc, out, _ = run([path], cmd="contact")
    r = json.loads(out)
    check("deep nesting refused", rc == 1 and r["status"] == "invalid_input" and "nested deeper" in r["message"], (rc, out[:300]))
    rc, out, _ = run(["--batch", path], cmd="contact")
    r = json.loads(out)
    check("deep nesting in a batch named by line", rc == 0 and r["message"].startswith("line 1:"), out[:300])
# An edge-edge contact whose axis is 1.3e-3 rad from a face normal of A gets that face's manifold (by
# design: nearly parallel faces rest on a patch); no point of it is deeper than the contact (one was,
# by 9.8e-7, measured along the face's normal).
case = {"a": {"type": "box", "half_extents": [0.2814954522318888, 0.9356604048193204, 1.279350947826431],
              "position": [-0.9390422977630712, -0.7688073471835875, 0.12515050999842403],
              "orientation": [-0.6666693101850246, -0.5773316539443829, 0.2923729869382105, 0.3698083675636554]},
        "b": {"type": "box", "half_extents": [1.342160170597555, 1.1464458855176383, 0.741903666406805],
              "position": [-1.0871633441944177, -1.3286141234423634, -0.3004025458051372],
              "orientation": [-0.3033124224644948, -0.16609858529227792, 0.8490022300892719, 0.39950975913745407]}}
rc, out, _ = run(["--batch", "-"], stdin=json.dumps(case) + "\n", cmd="contact")
r = json.loads(out)
check("near-face edge-edge contact: no point deeper than the contact",
      1 <= len(r["contacts"]) <= 4 and all(0 <= c["depth"] <= r["depth"] for c in r["contacts"]), r)
check("near-face edge-edge contact: the SAT depth", abs(r["depth"] - 1.1477803452196114) < 1e-12, r["depth"])

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
