#!/usr/bin/env python3
"""The list and tree micro-kernels of the Defero paper on every allocator
configuration of issue 6: std::allocator on glibc, with mimalloc preloaded
and with libtailor preloaded; tailor::allocator on the locality heap with
the First, Match and Path predicates for a sweep of K (its slabs from mmap,
glibc being malloc), and the same predicates at --libtailor-ks with
libtailor preloaded (rows "... on libtailor": the heap's slabs are then
libtailor regions). Prints markdown tables for docs/BENCHMARKS.md:

  1. time per phase (thread CPU time by default, --clock wall for wall
     time): the median over --runs rounds (each round runs every
     configuration once, so that drift hits all rows alike) of the full-size kernels
     (list N = 1M, tree N = 3M), each run under `setarch -R` so that the
     address layout (and hence which page a node lands on) is the same from
     run to run;
  2. with --kernels mixed: nanoseconds per container operation on a list
     worked on at several dynamisms D (docs/locality.md, "Choosing K and
     the predicate from D"), median over --runs runs;
  3. with --kernels bound: the tree kernel's insert, find and for_each on
     layouts made from the finished tree (bench/locality/layout_bound.cpp):
     what placement alone could give find;
  4. with --tlb: page walks per phase, from callgrind with its D1 cache made
     a model of the L2 data TLB (4 KiB lines, --tlb-entries entries scaled
     down by --cache-scale, 16-way), on the same scaled kernels as --cache;
  5. with --cache: D1 and LL data misses per phase from callgrind's cache
     simulator (deterministic, unlike time on this shared machine), on
     kernels scaled down by --cache-scale with the LL cache scaled down by
     the same factor (rounded to a power of two), so that the ratio of data
     to cache stays as at full size. D1 keeps the host's geometry.

Every run's JSON says which malloc and heap source it found; a row that
asked for libtailor and did not get it stops the script.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

PHASES = {"list": ["build", "sort", "for_each", "clear", "walk_built"],
          "tree": ["insert", "find", "for_each", "destroy"]}
FULL_N = {"list": 1000000, "tree": 3000000, "mixed": 1000000}
HOST_LL = 32 * 1024 * 1024  # the host's L3 (lscpu), what callgrind would simulate by default
MIMALLOC = ["/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", "/usr/lib/x86_64-linux-gnu/libmimalloc.so"]


def configs(ks, predicates, mimalloc, libtailor, libtailor_ks):
    out = [("glibc", ["--alloc", "std"], {})]
    if mimalloc:
        out.append(("mimalloc", ["--alloc", "std"], {"LD_PRELOAD": mimalloc}))
    on_libtailor = {"LD_PRELOAD": libtailor, "TAILOR_CONFIG": "/dev/null"} if libtailor else None
    if on_libtailor:
        out.append(("libtailor", ["--alloc", "std"], on_libtailor))
    for p in predicates:
        for k in ks:
            out.append((f"{p} K={k}", ["--alloc", "tailor", "--predicate", p, "--k", str(k)], {}))
    if on_libtailor:
        for p in predicates:
            for k in libtailor_ks:
                out.append((f"{p} K={k} on libtailor", ["--alloc", "tailor", "--predicate", p, "--k", str(k)],
                            on_libtailor))
    return out


def check_backend(result, env_extra, cmd):
    """The run found the malloc and heap source its row names."""
    want = "libtailor" if "libtailor" in env_extra.get("LD_PRELOAD", "") else "other"
    if result.get("malloc") != want or (result.get("heap_source") and
                                        result["heap_source"] != ("libtailor" if want == "libtailor" else "mmap")):
        sys.exit(f"locality_kernels: {' '.join(cmd)} ran on malloc={result.get('malloc')}, "
                 f"heap source={result.get('heap_source')}; expected malloc={want}")
    return result


def run(exe, kernel, n, args, env_extra, prefix=()):
    env = dict(os.environ, **env_extra)
    cmd = list(prefix) + [exe, "--kernel", kernel, "--n", str(n)] + args
    if kernel == "list":
        cmd.append("--walk-before-sort")
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"locality_kernels: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return check_backend(json.loads(proc.stdout.strip().splitlines()[-1]), env_extra, cmd)


def callgrind(exe, kernel, n, args, env_extra, ll_bytes, tmp, d1=None):
    """D1 / LL misses per phase; d1 replaces callgrind's D1 geometry (size,assoc,line)."""
    out = os.path.join(tmp, "callgrind.out")
    env = dict(os.environ, **env_extra)
    cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--LL={ll_bytes},16,64"] + \
        ([f"--D1={d1}"] if d1 else []) + \
        [f"--callgrind-out-file={out}", exe, "--kernel", kernel, "--n", str(n), "--walk-before-sort"] + args
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"locality_kernels: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    check_backend(json.loads(proc.stdout.strip().splitlines()[-1]), env_extra, cmd)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                          "--show=D1mr,D1mw,DLmr,DLmw", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True).stdout
    misses = {}
    # A function's total is the line that ends with its object file in brackets.
    for line in ann.splitlines():
        m = re.search(r"phase_(\w+?)<", line)
        if not m or not line.rstrip().endswith("]"):
            continue
        nums = re.findall(r"([\d,]+|\.)(?: \([^)]*\))?\s", line.split(" /")[0] + " ")
        vals = [0 if v == "." else int(v.replace(",", "")) for v in nums[:4]]
        if len(vals) < 4:
            continue
        d1, ll = vals[0] + vals[1], vals[2] + vals[3]
        prev = misses.get(m.group(1), (0, 0))
        misses[m.group(1)] = (prev[0] + d1, prev[1] + ll)
    os.unlink(out)
    return misses


def bound(exe, args, setarch, record):
    """The tree kernel on layouts made from the finished tree (layout_bound.cpp)."""
    n = int(FULL_N["tree"] * args.scale)
    phases = ["insert", "find", "for_each"]
    print(f"\n### tree kernel on planned layouts (layout_bound), N = {n:,}, spread 3, the heap's chunks: "
          f"thread CPU seconds, median of {args.runs} runs\n")
    print("| layout | " + " | ".join(phases) + " |")
    print("|---" * (len(phases) + 1) + "|")
    layouts = args.bound_layouts.split(",")
    all_runs = {layout: [] for layout in layouts}
    for i in range(args.runs):  # round-robin, as the kernels' timed runs
        for layout in layouts:
            cmd = setarch + [exe, "--layout", layout, "--n", str(n), "--top-depth", str(args.bound_top_depth)]
            print(f"[bound] round {i + 1}/{args.runs}: {layout}", file=sys.stderr, flush=True)
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if proc.returncode != 0:
                sys.exit(f"locality_kernels: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
            all_runs[layout].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for layout in layouts:
        med = {p: statistics.median(r["cpu"][p] for r in all_runs[layout]) for p in phases}
        name = f"top-then-key (top {args.bound_top_depth})" if layout == "top-then-key" else layout
        record.setdefault("bound", {})[name] = med
        print(f"| {name} | " + " | ".join(f"{med[p]:.3f}" for p in phases) + " |", flush=True)


def callgrind_table(exe, kernel, cfgs, args, tmp, record, key, title, ll, d1, cell):
    """One table of callgrind counts per phase, a row per configuration.
    d1: callgrind's D1 geometry (None: the host's); cell formats (D1, LL) counts."""
    cn = FULL_N[kernel] // args.cache_scale
    phases = PHASES[kernel]
    print(f"\n### {kernel} kernel under callgrind, N = {cn:,}, {title}\n")
    print("| allocator | " + " | ".join(phases) + " |")
    print("|---" * (len(phases) + 1) + "|")
    for name, cargs, env in cfgs:
        print(f"[{kernel}] callgrind ({key}) {name}", file=sys.stderr, flush=True)
        m = callgrind(exe, kernel, cn, cargs, env, ll, tmp, d1=d1)
        record.setdefault(kernel, {}).setdefault(name, {})[key] = m
        print(f"| {name} | " + " | ".join(cell(m.get(p, (0, 0))) for p in phases) + " |", flush=True)


def pow2_floor(x):
    p = 1
    while p * 2 <= x:
        p *= 2
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory (default: build)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per configuration (median shown)")
    ap.add_argument("--kernels", default="list,tree")
    ap.add_argument("--ks", default="48,52,56,58", help="K values of the sweep")
    ap.add_argument("--predicates", default="first,match,path")
    ap.add_argument("--libtailor-ks", default="52",
                    help="K values of the locality rows on libtailor (empty: none)")
    ap.add_argument("--no-libtailor", action="store_true", help="leave out every row on libtailor")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the full sizes for the timed runs")
    ap.add_argument("--no-time", action="store_true", help="skip the timed runs")
    ap.add_argument("--cache", action="store_true", help="also measure D1/LL misses with callgrind")
    ap.add_argument("--cache-scale", type=int, default=30, help="full size / callgrind size (default 30)")
    ap.add_argument("--tlb", action="store_true", help="also count page walks with callgrind (a TLB model)")
    ap.add_argument("--tlb-entries", type=int, default=2048,
                    help="entries of the modelled L2 data TLB at full size (default 2048: the host's)")
    ap.add_argument("--bound-layouts", default="insertion,random,key,top-then-key",
                    help="layouts of --kernels bound")
    ap.add_argument("--bound-top-depth", type=int, default=14, help="top depth of the top-then-key layout")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                    help="thread CPU time (default: leaves out time given to other work) or wall time")
    ap.add_argument("--dynamisms", default="1,10,30,60,90", help="D values (percent) of the mixed kernel")
    ap.add_argument("--json", help="write every measurement to this file")
    args = ap.parse_args()

    exe = os.path.abspath(os.path.join(args.build, "bin", "locality_kernels"))
    mimalloc = next((m for m in MIMALLOC if os.path.exists(m)), None)
    setarch = ["setarch", "-R"] if shutil.which("setarch") else []
    libtailor = os.path.abspath(os.path.join(args.build, "lib", "libtailor.so"))
    if args.no_libtailor:
        libtailor = None
    elif not os.path.exists(libtailor):
        sys.exit(f"locality_kernels: {libtailor} not built (or pass --no-libtailor)")
    cfgs = configs([int(k) for k in args.ks.split(",")], args.predicates.split(","), mimalloc, libtailor,
                   [int(k) for k in args.libtailor_ks.split(",") if k])
    record = {}
    tmp = tempfile.mkdtemp(prefix="tailor-locality-")
    try:
        for kernel in args.kernels.split(","):
            if kernel == "bound":
                bound(os.path.abspath(os.path.join(args.build, "bin", "layout_bound")), args, setarch, record)
                continue
            if kernel == "mixed":
                n = int(FULL_N[kernel] * args.scale)
                ds = args.dynamisms.split(",")
                print(f"\n### mixed kernel, N = {n:,}: median ns per container operation over {args.runs} runs\n")
                print("| allocator | " + " | ".join(f"D = {d}%" for d in ds) + " |")
                print("|---" * (len(ds) + 1) + "|")
                for name, cargs, env in cfgs:
                    cells = []
                    for d in ds:
                        runs = []
                        for i in range(args.runs):
                            print(f"[mixed D={d}] {name} run {i + 1}/{args.runs}", file=sys.stderr, flush=True)
                            runs.append(run(exe, kernel, n, cargs + ["--dynamism", d], env, setarch))
                        ns = statistics.median(r["layout"]["ns_per_op"] for r in runs)
                        record.setdefault("mixed", {}).setdefault(name, {})[d] = {
                            "ns_per_op": ns, "measured_dynamism": runs[0]["layout"]["measured_dynamism"]}
                        cells.append(f"{ns:.1f}")
                    print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
                continue
            phases = PHASES[kernel]
            n = int(FULL_N[kernel] * args.scale)
            if not args.no_time:
                print(f"\n### {kernel} kernel, N = {n:,}: median {args.clock} seconds per phase over {args.runs} runs\n")
                print("| allocator | " + " | ".join(phases) + " | same page (built / in order) |")
                print("|---" * (len(phases) + 2) + "|")
                # Round-robin over the configurations, so that a drift of the
                # machine's speed during the sweep hits every row alike.
                all_runs = {name: [] for name, _, _ in cfgs}
                for i in range(args.runs):
                    for name, cargs, env in cfgs:
                        print(f"[{kernel}] round {i + 1}/{args.runs}: {name}", file=sys.stderr, flush=True)
                        all_runs[name].append(run(exe, kernel, n, cargs, env, setarch))
                for name, cargs, env in cfgs:
                    runs = all_runs[name]
                    key = "cpu" if args.clock == "cpu" else "phases"
                    med = {p: statistics.median(r[key][p] for r in runs) for p in phases}
                    layout = runs[0]["layout"]
                    lay = layout.get("same_page_built", layout.get("same_page_in_order", 0))
                    record.setdefault(kernel, {}).setdefault(name, {})["time"] = med
                    record[kernel][name]["layout"] = layout
                    print(f"| {name} | " + " | ".join(f"{med[p]:.3f}" for p in phases) + f" | {lay:.3f} |",
                          flush=True)
            ll = pow2_floor(HOST_LL // args.cache_scale)
            if args.tlb:
                entries = max(16, pow2_floor(args.tlb_entries // args.cache_scale))
                callgrind_table(exe, kernel, cfgs, args, tmp, record, "page_walks",
                                f"a {entries}-entry 16-way TLB of 4 KiB pages: page walks per phase (thousands)",
                                ll, f"{entries * 4096},16,4096", lambda m: f"{m[0] / 1000:.0f}")
            if args.cache:
                callgrind_table(exe, kernel, cfgs, args, tmp, record, "misses",
                                f"LL = {ll // 1024} KiB: D1 / LL data misses per phase (thousands)",
                                ll, None, lambda m: f"{m[0] / 1000:.0f} / {m[1] / 1000:.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
