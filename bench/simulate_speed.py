#!/usr/bin/env python3
"""Simulation speed and memory ranking of the built-in DMMs on the traces
of the bundled workloads. Records each workload once (at its default size,
into --traces), then runs `tailor simulate --json` --runs times and reports,
per DMM, the median of events simulated per second on one core (the
simulation loop only, not the trace loading) and the memory usage. Prints
markdown tables for docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

WORKLOADS = ["hypercube_net", "cfrac", "boolean_sets", "gc_trees", "boxed_spheres",
             "robot_kinematics", "list_kernel", "tree_kernel", "olden_treeadd", "olden_health"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory (default: build)")
    ap.add_argument("--traces", default=None, help="directory for the workload traces (default: BUILD/traces)")
    ap.add_argument("--dmm", default="kng", help="comma-separated DMMs (default: kng)")
    ap.add_argument("--runs", type=int, default=3, help="simulations per trace (median is reported)")
    ap.add_argument("--front", type=int, default=0,
                    help="tailor simulate --front (default 0: the mechanisms alone, as the DMM simulator paper measured them)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated subset")
    args = ap.parse_args()

    tailor = os.path.abspath(os.path.join(args.build, "bin", "tailor"))
    traces = os.path.abspath(args.traces or os.path.join(args.build, "traces"))
    os.makedirs(traces, exist_ok=True)
    dmms = args.dmm.split(",")
    speed, usage = {}, {}
    for name in args.workloads.split(","):
        trace = os.path.join(traces, f"{name}.trace")
        if not os.path.exists(trace):
            print(f"[{name}] recording", file=sys.stderr, flush=True)
            exe = os.path.abspath(os.path.join(args.build, "bin", f"wl_{name}"))
            subprocess.run([tailor, "record", "-q", "-o", trace, "--", exe], check=True, stdout=subprocess.DEVNULL)
        runs = {d: [] for d in dmms}
        for i in range(args.runs):
            print(f"[{name}] simulate {i + 1}/{args.runs}", file=sys.stderr, flush=True)
            out = subprocess.run([tailor, "simulate", trace, "--dmm", args.dmm, "--json", "--threads", "1",
                                  "--front", str(args.front)], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
            for m in json.loads(out)["dmms"]:
                runs[m["dmm"]].append(m["operations"] / m["seconds"] if m["seconds"] > 0 else 0)
                usage[(name, m["dmm"])] = m["held_usage_bytes"] if args.front == 0 else m["memory_usage_bytes"]
        for d in dmms:
            speed[(name, d)] = statistics.median(runs[d])

    print("Operations (allocations and releases) simulated per second, millions, median of %d runs, one core:\n" % args.runs)
    print("| workload | " + " | ".join(dmms) + " |")
    print("|---|" + "---:|" * len(dmms))
    for name in args.workloads.split(","):
        print(f"| {name} | " + " | ".join(f"{speed[(name, d)] / 1e6:.1f}" for d in dmms) + " |")
    print("\nMemory usage (high-water mark of memory held from the system, KiB; rank 1 = least):\n")
    print("| workload | " + " | ".join(dmms) + " | ranking |")
    print("|---|" + "---:|" * len(dmms) + "---|")
    for name in args.workloads.split(","):
        ranked = sorted(dmms, key=lambda d: usage[(name, d)])
        print(f"| {name} | " + " | ".join(f"{usage[(name, d)] / 1024:,.0f}" for d in dmms) + " | " +
              " < ".join(ranked) + " |")


if __name__ == "__main__":
    main()
