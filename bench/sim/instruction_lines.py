#!/usr/bin/env python3
"""Instructions of one function by the source line of that function they belong to, inlined code included.

instruction_profile.py gives each function's total; callgrind_annotate's line view gives each line
its own instructions only, and the helpers inlined into it (Eigen, the shape headers) show up under
their own files. This reads a callgrind run made with --dump-instr=yes, maps every instruction
address of the function to its inline chain (addr2line -i) and charges it to the outermost frame in
the given source file: the line of the function that the inlined code was called from.

Usage (a Release build with debug information, as for instruction_profile.py):
  GOMP_SPINCOUNT=10000 valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \\
      build-prof/bench/proxima_bench_dem bench/sim/scenes/polyhedra10k.yaml --timed-steps 10 --threads 1 \\
      --settled CK --out /tmp/x.json
  python3 bench/sim/instruction_lines.py cg.out build-prof/bench/proxima_bench_dem \\
      "proxima::ContactResult proxima::detail::gjkTd<proxima::detail::PolytopeRef" gjk_td.hpp --per CALLS
  (--innermost: charge the innermost frame in that file instead, e.g. a helper's own lines.)
CALLS divides the counts (e.g. the run's narrow-phase calls); the whole run is counted, setup included.
"""
import argparse
import collections
import re
import subprocess


def costs(path, prefix):
    """{address: self instructions} of the functions whose name starts with prefix (lambdas excluded)."""
    names, cost = {}, collections.Counter()
    current, addr, skip_call_line = "", 0, False
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                current = names.get(m.group(2), "")
            continue
        if line.startswith("calls="):
            skip_call_line = True  # the next cost line is the call's inclusive cost
            continue
        if not line or line[0] not in "+-*0123456789":
            continue
        parts = line.split()
        tok = parts[0]
        if tok == "*":
            pass
        elif tok[0] in "+-":
            addr += int(tok, 0)
        else:
            addr = int(tok, 0)
        if skip_call_line:
            skip_call_line = False
            continue
        if current.startswith(prefix) and "{lambda" not in current and len(parts) >= 3:
            cost[addr] += int(parts[-1])
    return cost


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("callgrind_out")
    ap.add_argument("binary")
    ap.add_argument("function_prefix")
    ap.add_argument("source_file", help="file name whose lines are reported, e.g. gjk_td.hpp")
    ap.add_argument("--per", type=float, default=1.0, help="divide the counts by this (e.g. the calls)")
    ap.add_argument("--innermost", action="store_true")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    cost = costs(args.callgrind_out, args.function_prefix)
    if not cost:
        raise SystemExit("no instructions found for that function (was the run made with --dump-instr=yes?)")
    addrs = sorted(cost)
    out = subprocess.run(["addr2line", "-a", "-i", "-e", args.binary] + [hex(a) for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    chains, current = {}, None
    for line in out:
        if line.startswith("0x"):
            current = int(line, 16)
            chains[current] = []
        elif line.strip():
            chains[current].append(line.strip())
    by_line = collections.Counter()
    for a, c in cost.items():
        frames = [f for f in chains.get(a, []) if args.source_file in f]
        frame = (frames[0] if args.innermost else frames[-1]) if frames else "(elsewhere)"
        by_line[re.sub(r" \(discriminator \d+\)", "", frame.split("/")[-1])] += c
    print(f"total {sum(cost.values()) / args.per:.1f}")
    for key, c in by_line.most_common(args.top):
        print(f"{c / args.per:9.1f}  {key}")


if __name__ == "__main__":
    main()
