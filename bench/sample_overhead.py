#!/usr/bin/env python3
"""Sampled recording (`tailor record --sample`) on the bundled workloads: its
cost against the unrecorded program, and how near its estimates come to an
exact recording of the same program. Prints a markdown table for
docs/BENCHMARKS.md.

Cost: every workload unrecorded and recorded with --sample INTERVAL, once
each per round, rounds interleaved; medians of wall time. Accuracy (after
the rounds, not timed): the workload recorded exactly with --stacks and
with --sample; `tailor stats --json` of both: the estimated peak in use
against the exact one (with the estimate's standard error), and the top 10
stacks by bytes allocated, compared by their symbolized frames: how many of
the exact top 10 are in the sampled top 10, and whether in the same order;
the same for the top 10 call sites by bytes (a program that builds a tree
recursively has a stack of its own for nearly every block, all of one size:
its top 10 stacks are ties, and its call sites say where the bytes go).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = ["hypercube_net", "cfrac", "boolean_sets", "gc_trees", "boxed_spheres",
             "robot_kinematics", "list_kernel", "tree_kernel", "olden_treeadd", "olden_health",
             "olden_em3d", "olden_mst", "olden_tsp", "olden_perimeter", "olden_bisort", "ptrdist_ft"]


def run(cmd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"sample_overhead: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def stats(tailor, trace):
    return json.loads(run([tailor, "stats", "--json", "--top", "10", trace])[1])


def stack_key(stack):
    return tuple(frame["symbol"] or hex(frame["address"]) for frame in stack["stack"])


def overlap(exact, sampled):
    """How many of `exact`'s keys are in `sampled`, and whether in the same order."""
    return len(set(exact) & set(sampled)), exact == sampled


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory (default: build)")
    ap.add_argument("--runs", type=int, default=5, help="rounds (the median is reported); 0: accuracy only")
    ap.add_argument("--sample", default="512K", help="sampling interval (default: 512K, jemalloc's)")
    ap.add_argument("--seed", default="1", help="--sample-seed of the accuracy recording")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated subset")
    ap.add_argument("--no-accuracy", action="store_true", help="time only")
    args = ap.parse_args()

    tailor = os.path.abspath(os.path.join(args.build, "bin", "tailor"))
    names = args.workloads.split(",")
    exe = {n: os.path.abspath(os.path.join(args.build, "bin", f"wl_{n}")) for n in names}
    tmp = tempfile.mkdtemp(prefix="tailor-sample-")
    base = {n: [] for n in names}
    sampled = {n: [] for n in names}
    accuracy = {}
    try:
        trace = os.path.join(tmp, "s.trace")
        for i in range(args.runs):
            for n in names:
                print(f"[{n}] round {i + 1}/{args.runs}", file=sys.stderr, flush=True)
                base[n].append(run([exe[n]])[0])
                sampled[n].append(run([tailor, "record", "-q", "--sample", args.sample, "-o", trace, "--", exe[n]])[0])
        if not args.no_accuracy:
            for n in names:
                print(f"[{n}] exact --stacks and sampled recordings, stats", file=sys.stderr, flush=True)
                exact_trace, sampled_trace = os.path.join(tmp, "e.trace"), os.path.join(tmp, "s.trace")
                run([tailor, "record", "-q", "--stacks", "-o", exact_trace, "--", exe[n]])
                run([tailor, "record", "-q", "--sample", args.sample, "--sample-seed", args.seed, "-o", sampled_trace,
                     "--", exe[n]])
                e, s = stats(tailor, exact_trace), stats(tailor, sampled_trace)
                top_e = [stack_key(x) for x in e["top_stacks_by_bytes"]]
                sites_e = [x["symbol"] for x in e["top_sites_by_bytes"]]
                accuracy[n] = {
                    "events": s["events"], "exact_peak": e["max_in_use_bytes"], "peak": s["max_in_use_bytes"],
                    "peak_error": s["sampling"]["max_in_use_error"], "stacks": len(top_e), "sites": len(sites_e),
                    "stack_overlap": overlap(top_e, [stack_key(x) for x in s["top_stacks_by_bytes"]]),
                    "site_overlap": overlap(sites_e, [x["symbol"] for x in s["top_sites_by_bytes"]]),
                }
                os.remove(exact_trace)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"| workload | unrecorded (s) | --sample {args.sample} (s) | sampled / unrecorded | sampled events "
          "| exact peak in use (B) | estimated peak (B) | estimate / exact | standard error "
          "| exact top-10 stacks in the sampled top 10 | same order | exact top-10 call sites in the sampled top 10 "
          "| same order |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
    ratios = []
    yes = lambda flag: "yes" if flag else "no"
    for n in names:
        timing = " - | - | - |"
        if base[n]:
            b, t = statistics.median(base[n]), statistics.median(sampled[n])
            ratios.append(t / b)
            timing = f" {b:.2f} | {t:.2f} | {t / b:.3f}x |"
        a = accuracy.get(n)
        if a:
            (sc, so), (cc, co) = a["stack_overlap"], a["site_overlap"]
            cells = (f" {a['events']:,} | {a['exact_peak']:,} | {a['peak']:,} | {a['peak'] / a['exact_peak']:.3f} |"
                     f" {100 * a['peak_error'] / a['exact_peak']:.1f}% | {sc} of {a['stacks']} | {yes(so)} |"
                     f" {cc} of {a['sites']} | {yes(co)} |")
        else:
            cells = " - | - | - | - | - | - | - | - | - |"
        print(f"| {n} |{timing}{cells}")
    if ratios:
        print(f"| **geometric mean** | | | **{statistics.geometric_mean(ratios):.3f}x** (most {max(ratios):.3f}x) "
              "| | | | | | | | | |")


if __name__ == "__main__":
    main()
