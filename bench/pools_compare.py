#!/usr/bin/env python3
"""Call-site pools (docs/pools.md) measured: every workload under glibc,
default libtailor and libtailor with TAILOR_POOLS=1 (optionally also a
libtailor built from another commit, --base-lib, to show that the default
path did not change).

Two measurements:
  wall time  --runs interleaved rounds (every allocator once per round, so
             drift hits all alike); median wall time and median peak RSS
             (GNU time's %M) per allocator, with ratios to glibc and to
             default libtailor, and the arithmetic mean of the speedups
             (the seed's summary statistic) over the workloads.
  cachegrind --cachegrind: one run per allocator under
             `valgrind --tool=cachegrind --cache-sim=yes` (deterministic):
             instructions executed, D1 misses and last-level data misses,
             at --cg-scale of each workload's default size.

--cpu N (default 0) pins every wall-time run of a one-thread workload (the
bundled ones and four of bench/alloc) to CPU N, for every allocator alike,
as alloc_compare.py does: a virtual machine's CPUs may differ in speed
(here by up to 1.6x, and which one is faster changes). --cpu -1: no pinning.

Every run's stdout must equal glibc's (the workloads check themselves).
Prints markdown tables; the machine's load average is printed before and
after, since wall times on a busy machine are noisy.

  bench/pools_compare.py --build build --runs 5
  bench/pools_compare.py --build build --cachegrind --base-lib /path/to/old/libtailor.so
"""
import argparse
import os
import statistics
import subprocess
import sys

from measured_run import run_with_peak_rss

POINTER_CHASING = ["olden_em3d", "olden_health", "olden_mst", "olden_treeadd", "olden_tsp", "olden_perimeter",
                   "olden_bisort", "ptrdist_ft"]
OTHERS = ["hypercube_net", "cfrac", "boolean_sets", "gc_trees", "boxed_spheres", "robot_kinematics",
          "list_kernel", "tree_kernel"]
# The allocator benchmarks of bench/alloc (binaries ab_NAME; several threads,
# cross-thread frees, large and huge blocks): --workloads alloc.
ALLOC_BENCH = ["ab_mt_random_small", "ab_mt_producer_consumer", "ab_mt_server", "ab_mt_false_sharing",
               "ab_realloc_grow", "ab_large_churn", "ab_mt_larson", "ab_random_replace", "ab_huge_churn",
               "ab_mt_burst_pass"]
# bench/alloc programs that run one thread (the bundled workloads all do).
ONE_THREAD_ALLOC = {"ab_realloc_grow", "ab_large_churn", "ab_random_replace", "ab_huge_churn"}
# Sizes for the cachegrind runs (about a tenth of the work of the defaults).
CG_SIZES = {"olden_em3d": 20000, "olden_health": 200, "olden_mst": 500, "olden_treeadd": 18, "olden_tsp": 100000,
            "olden_perimeter": 10, "olden_bisort": 16, "ptrdist_ft": 20000, "hypercube_net": 50000, "cfrac": 8,
            "boolean_sets": 40, "gc_trees": 14, "boxed_spheres": 500, "robot_kinematics": 5000,
            "list_kernel": 50000, "tree_kernel": 30000}


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def allocators(args):
    lib = os.path.abspath(os.path.join(args.build, "lib", "libtailor.so"))
    a = {"glibc": ({}, None)}
    if args.base_lib:
        a["libtailor@base"] = ({}, os.path.abspath(args.base_lib))
    a["libtailor"] = ({}, lib)
    a["pools"] = ({"TAILOR_POOLS": "1"}, lib)
    if args.pools_file:
        a["pools-file"] = ({"TAILOR_POOLS_FILE": os.path.abspath(args.pools_file)}, lib)
    return a


def env_for(extra, preload):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAILOR_") and k != "LD_PRELOAD"}
    env["TAILOR_CONFIG"] = "/dev/null"
    env.update(extra)
    if preload:
        env["LD_PRELOAD"] = preload
    return env


def run_timed(cmd, env):
    elapsed, rss, p = run_with_peak_rss(
        cmd, env, "pools-compare-",
        lambda failed: f"pools_compare: {' '.join(cmd)} exited {failed.returncode}:\n{failed.stderr.decode()[-2000:]}")
    return elapsed, rss, p.stdout.decode(), p.stderr.decode()


def run_cachegrind(cmd, env):
    p = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=/dev/null"] + cmd,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit(f"pools_compare: cachegrind {' '.join(cmd)} exited {p.returncode}:\n{p.stderr.decode()[-2000:]}")
    vals = {}
    for line in p.stderr.decode().splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[0].startswith("=="):
            continue
        key = " ".join(parts[1:3])
        if key in ("I refs:", "D1 misses:", "LLd misses:"):
            vals[key] = int(parts[3].replace(",", ""))
    return vals["I refs:"], vals["D1 misses:"], vals["LLd misses:"], p.stdout.decode()


def fmt_ratio(x):
    return f"{x:.3f}"


def binary(args, name):
    """A bundled workload's binary (wl_NAME), or an allocator benchmark's (ab_NAME)."""
    return os.path.abspath(os.path.join(args.build, "bin", name if name.startswith("ab_") else "wl_" + name))


def wall(args, names, allocs):
    res = {}
    print(f"load before: {load()}", flush=True)
    print(f"one-thread workloads pinned to CPU {args.cpu}" if args.cpu >= 0 else "unpinned", flush=True)
    for name in names:
        cmd = [binary(args, name)]
        if args.cpu >= 0 and (not name.startswith("ab_") or name in ONE_THREAD_ALLOC):
            cmd = ["taskset", "-c", str(args.cpu)] + cmd
        ref = None
        for r in range(args.runs):
            for alloc, (extra, lib) in allocs.items():
                t, rss, out, err = run_timed(cmd, env_for(extra, lib))
                if "tailor:" in err:
                    sys.exit(f"pools_compare: {name} under {alloc} complained: {err.strip()}")
                if ref is None:
                    ref = out
                elif out != ref:
                    sys.exit(f"pools_compare: {name} under {alloc}: output differs from glibc's")
                res.setdefault((name, alloc), ([], []))
                res[(name, alloc)][0].append(t)
                res[(name, alloc)][1].append(rss)
                print(f"  [{name}] round {r + 1} {alloc}: {t:.3f} s {rss} KB", file=sys.stderr, flush=True)
    print(f"load after: {load()}\n")
    cols = list(allocs)
    print("| workload | " + " | ".join(f"{c} s" for c in cols) + " | pools vs glibc | pools vs libtailor | "
          + " | ".join(f"{c} RSS MB" for c in cols) + " | RSS pools / libtailor |")
    print("|---" * (2 * len(cols) + 4) + "|")
    sp_glibc, sp_tailor = [], []
    for name in names:
        med = {c: statistics.median(res[(name, c)][0]) for c in cols}
        rss = {c: statistics.median(res[(name, c)][1]) / 1024 for c in cols}
        g = med["glibc"] / med["pools"]
        l = med["libtailor"] / med["pools"]
        sp_glibc.append(g)
        sp_tailor.append(l)
        print(f"| {name} | " + " | ".join(f"{med[c]:.3f}" for c in cols) + f" | {g:.3f} | {l:.3f} | "
              + " | ".join(f"{rss[c]:.1f}" for c in cols) + f" | {rss['pools'] / rss['libtailor']:.2f} |")
    mean_g = statistics.mean(sp_glibc)
    mean_l = statistics.mean(sp_tailor)
    print(f"\nspeedup of pools (time ratio, > 1: pools faster), arithmetic mean over {len(names)} workloads: "
          f"vs glibc {mean_g:.3f} ({100 * (mean_g - 1):+.1f}%), vs default libtailor {mean_l:.3f} "
          f"({100 * (mean_l - 1):+.1f}%); slowest vs libtailor: {min(sp_tailor):.3f}")


def cachegrind(args, names, allocs):
    cols = list(allocs)
    print("| workload (size) | " + " | ".join(f"{c} Ir" for c in cols) + " | "
          + " | ".join(f"{c} D1 miss" for c in cols) + " | " + " | ".join(f"{c} LLd miss" for c in cols) + " |")
    print("|---" * (3 * len(cols) + 1) + "|")
    for name in names:
        size = CG_SIZES[name]
        cmd = [os.path.abspath(os.path.join(args.build, "bin", "wl_" + name)), "--size", str(size)]
        vals = {}
        ref = None
        for alloc, (extra, lib) in allocs.items():
            ir, d1, ll, out = run_cachegrind(cmd, env_for(extra, lib))
            if ref is None:
                ref = out
            elif out != ref:
                sys.exit(f"pools_compare: {name} under {alloc}: output differs from glibc's")
            vals[alloc] = (ir, d1, ll)
            print(f"  [{name}] {alloc}: Ir {ir} D1 {d1} LLd {ll}", file=sys.stderr, flush=True)
        print(f"| {name} ({size}) | " + " | ".join(f"{vals[c][0] / 1e6:.1f}M" for c in cols) + " | "
              + " | ".join(f"{vals[c][1] / 1e6:.2f}M" for c in cols) + " | "
              + " | ".join(f"{vals[c][2] / 1e6:.2f}M" for c in cols) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds (wall time)")
    ap.add_argument("--workloads", default=",".join(POINTER_CHASING),
                    help="comma-separated; 'others' for the other bundled workloads, 'all' for every one, "
                         "'alloc' for the allocator benchmarks (wall time only)")
    ap.add_argument("--cpu", type=int, default=0,
                    help="CPU that one-thread workloads run pinned to in the wall-time rounds (default 0; -1: unpinned)")
    ap.add_argument("--cachegrind", action="store_true", help="instruction and cache-miss counts instead of time")
    ap.add_argument("--base-lib", help="a libtailor.so built from another commit, as an extra column")
    ap.add_argument("--pools-file", help="also run with TAILOR_POOLS_FILE=this profile")
    args = ap.parse_args()
    names = {"others": OTHERS, "all": POINTER_CHASING + OTHERS, "alloc": ALLOC_BENCH}.get(args.workloads,
                                                                                          args.workloads.split(","))
    allocs = allocators(args)
    (cachegrind if args.cachegrind else wall)(args, names, allocs)


if __name__ == "__main__":
    main()
