#!/usr/bin/env python3
"""libtailor against the system's allocators: runs every workload (the ten
bundled ones and the allocator benchmarks of bench/alloc) under glibc,
mimalloc, jemalloc, tcmalloc (Debian packages, via LD_PRELOAD) and libtailor,
--runs times each (interleaved, so drift hits all alike), and prints a
markdown table of median wall time and median peak RSS (GNU time's %M),
each peer as a ratio to libtailor (> 1: libtailor is faster / leaner), with
geometric means. Every run's stdout must equal glibc's (the programs check
themselves and print deterministic results).

--base-lib OLD.so adds tailor-base and tailor-secure-base: another build of
libtailor (an older commit's) in the same rounds.

--allocators tailor-secure,scudo,tailor compares the hardened allocators:
libtailor with TAILOR_SECURE=1 and LLVM's Scudo (from libclang-rt-14-dev).

--args NAME=ARGS runs workload NAME with ARGS (split on spaces) instead of
its defaults; NAME may carry a label after '@' (mt_larson@sized=--sized 1),
so that one program runs as several rows.

--cpu N (default 0) pins every run of a one-thread workload to CPU N, for
every allocator alike: a virtual machine's CPUs may differ in speed (here by
up to 1.6x, and which one is faster changes), so an unpinned one-thread
run's time depends on where the scheduler put it. Workloads with threads
run unpinned. --cpu -1: no pinning.

--scaling measures 1 and 2 threads on the scalable workloads (same work per
thread) and prints throughput(2) / throughput(1) per allocator.
"""
import argparse
import math
import os
import statistics
import sys

from measured_run import run_with_peak_rss

LIBDIR = "/usr/lib/x86_64-linux-gnu"
PEERS = {
    "glibc": None,
    "mimalloc": f"{LIBDIR}/libmimalloc.so.2",
    "jemalloc": f"{LIBDIR}/libjemalloc.so.2",
    "tcmalloc": f"{LIBDIR}/libtcmalloc_minimal.so.4",
}
BUNDLED = ["hypercube_net", "cfrac", "boolean_sets", "gc_trees", "boxed_spheres",
           "robot_kinematics", "list_kernel", "tree_kernel", "olden_treeadd", "olden_health"]
ALLOC_BENCH = ["mt_random_small", "mt_producer_consumer", "mt_server", "mt_false_sharing",
               "realloc_grow", "large_churn", "mt_larson", "random_replace", "huge_churn", "mt_burst_pass"]
# Hardened allocators (--allocators tailor-secure,scudo,tailor): secure
# libtailor (TAILOR_SECURE=1) and LLVM's Scudo (libclang-rt-14-dev).
SCUDO = "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.scudo_standalone-x86_64.so"
# tailor-secure-nozero and -noquarantine: secure mode with one of its
# checks turned off (docs/allocator.md, "Secure mode": what each costs).
EXTRA_ENV = {"tailor-secure": {"TAILOR_SECURE": "1"}, "tailor-secure-base": {"TAILOR_SECURE": "1"},
             "tailor-secure-nozero": {"TAILOR_SECURE": "1", "TAILOR_SECURE_ZERO": "0"},
             "tailor-secure-noquarantine": {"TAILOR_SECURE": "1", "TAILOR_SECURE_QUARANTINE": "0"}}
# Programs that run one thread unless given --threads.
ONE_THREAD = set(BUNDLED) | {"realloc_grow", "large_churn", "random_replace", "huge_churn"}
# Scalable: no shared data between threads but what the allocator adds.
SCALABLE = {"mt_random_small": 10000000, "mt_false_sharing": 100000, "mt_server": 2000000}


def run_measured(cmd, preload, extra_env=None):
    """Wall time, peak RSS (KiB, see measured_run) and stdout of one run."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = preload
    env.update(extra_env or {})
    elapsed, rss, proc = run_with_peak_rss(
        cmd, env, "alloc-compare-",
        lambda failed: f"alloc_compare: {' '.join(cmd)} (LD_PRELOAD={preload}) exited {failed.returncode}:\n"
                       f"{failed.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, rss, proc.stdout.decode()


def one_thread(name, args):
    """Whether workload NAME (NAME@label) run with ARGS has one thread."""
    if name.split("@")[0] not in ONE_THREAD:
        return False
    return all(args[i + 1] == "1" for i in range(len(args) - 1) if args[i] == "--threads")


def exe_for(build, name):
    prefix = "wl_" if name in BUNDLED else "ab_"
    return os.path.abspath(os.path.join(build, "bin", prefix + name))


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def workload_args(specs):
    """--args NAME=ARGS entries as {NAME: [ARGS...]}."""
    out = {}
    for spec in specs or []:
        name, sep, rest = spec.partition("=")
        if not sep or not name:
            sys.exit(f"alloc_compare: --args {spec!r}: expected NAME=ARGS")
        out[name] = rest.split()
    return out


def compare(args, allocators):
    names = [w for w in args.workloads.split(",") if w]
    extra = workload_args(args.args)
    for n in extra:
        if n not in names:
            names.append(n)
    for name in names:
        exe = exe_for(args.build, name.split("@")[0])
        if not os.path.exists(exe):
            sys.exit(f"alloc_compare: workload {name!r}: no program {exe} (a name of {', '.join(BUNDLED + ALLOC_BENCH)}; "
                     "make build builds them)")
    results = {}  # (workload, allocator) -> ([times], [rss])
    for name in names:
        cmd = [exe_for(args.build, name.split("@")[0])] + extra.get(name, [])
        if args.cpu >= 0 and one_thread(name, extra.get(name, [])):
            cmd = ["taskset", "-c", str(args.cpu)] + cmd
        reference = None
        for i in range(args.runs):
            for alloc, lib in allocators.items():
                print(f"[{name}] {alloc} {i + 1}/{args.runs}", file=sys.stderr, flush=True)
                t, rss, out = run_measured(cmd, lib, EXTRA_ENV.get(alloc))
                if reference is None:
                    reference = out
                elif out != reference:
                    sys.exit(f"alloc_compare: {name} under {alloc} printed a different result:\n{out}\nvs\n{reference}")
                ts, rs = results.setdefault((name, alloc), ([], []))
                ts.append(t)
                rs.append(rss)
    peers = [a for a in allocators if a != "tailor"]
    # The fastest peer is another allocator: other builds and modes of
    # libtailor (tailor-base, tailor-secure) are columns, not rivals.
    rivals = [p for p in peers if not p.startswith("tailor")] or peers
    med = {k: (statistics.median(v[0]), statistics.median(v[1])) for k, v in results.items()}
    print(f"Median of {args.runs} runs. Time and peak RSS of libtailor; peers as ratio peer / libtailor "
          "(above 1: libtailor faster or leaner). Last columns: libtailor / fastest peer, libtailor / glibc RSS.\n")
    head = "| workload | tailor s | " + " | ".join(f"{p} time" for p in peers) + " | tailor MiB | " + \
        " | ".join(f"{p} RSS" for p in peers) + " | tailor / fastest | tailor / glibc RSS |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    time_ratios = {p: [] for p in peers}
    rss_ratios = {p: [] for p in peers}
    vs_fastest, vs_glibc_rss = [], []
    for name in names:
        tt, tr = med[(name, "tailor")]
        label = f"{name} `{' '.join(extra[name])}`" if name in extra else name
        cells = [label, f"{tt:.3f}" if tt < 1 else f"{tt:.2f}"]
        for p in peers:
            pt, _ = med[(name, p)]
            time_ratios[p].append(pt / tt)
            cells.append(f"{pt / tt:.2f}")
        cells.append(f"{tr / 1024:.1f}")
        for p in peers:
            _, pr = med[(name, p)]
            rss_ratios[p].append(pr / tr)
            cells.append(f"{pr / tr:.2f}")
        fastest = min(med[(name, p)][0] for p in rivals)
        vs_fastest.append(tt / fastest)
        cells.append(f"{tt / fastest:.2f}")
        if "glibc" in peers:
            vs_glibc_rss.append(tr / med[(name, "glibc")][1])
            cells.append(f"{tr / med[(name, 'glibc')][1]:.2f}")
        else:
            cells.append("-")
        print("| " + " | ".join(cells) + " |")
    cells = ["**geometric mean**", ""] + [f"**{geo(time_ratios[p]):.2f}**" for p in peers] + [""] + \
        [f"**{geo(rss_ratios[p]):.2f}**" for p in peers] + [f"**{geo(vs_fastest):.2f}**",
                                                            f"**{geo(vs_glibc_rss):.2f}**" if vs_glibc_rss else "-"]
    print("| " + " | ".join(cells) + " |")
    if "glibc" in peers:
        print("\nGeometric-mean time relative to glibc (lower is faster): " + ", ".join(
            f"{a} {geo([med[(n, a)][0] / med[(n, 'glibc')][0] for n in names]):.2f}x" for a in allocators))
        print("Geometric-mean peak RSS relative to glibc (lower is leaner): " + ", ".join(
            f"{a} {geo([med[(n, a)][1] / med[(n, 'glibc')][1] for n in names]):.2f}x" for a in allocators))
    worst = max(zip(vs_fastest, names))
    print(f"Worst workload against its fastest peer: {worst[1]} at {worst[0]:.2f}x")


def scaling(args, allocators):
    print(f"\nThroughput with 2 threads / with 1 thread (same work per thread; median of {args.runs} runs; "
          f"{os.cpu_count()} CPUs)\n")
    print("| workload | " + " | ".join(allocators) + " |")
    print("|---" * (len(allocators) + 1) + "|")
    for name, size in SCALABLE.items():
        cells = [name]
        for alloc, lib in allocators.items():
            t = {}
            for threads in (1, 2):
                cmd = [exe_for(args.build, name), "--threads", str(threads), "--size", str(size)]
                t[threads] = statistics.median(run_measured(cmd, lib, EXTRA_ENV.get(alloc))[0] for _ in range(args.runs))
            cells.append(f"{2 * t[1] / t[2]:.2f}x")
        print("| " + " | ".join(cells) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory (default: build)")
    ap.add_argument("--runs", type=int, default=3, help="runs per allocator and workload (median is reported)")
    ap.add_argument("--workloads", default=",".join(BUNDLED + ALLOC_BENCH), help="comma-separated subset")
    ap.add_argument("--allocators", default="glibc,mimalloc,jemalloc,tcmalloc,tailor",
                    help="comma-separated subset of glibc, mimalloc, jemalloc, tcmalloc, tailor, tailor-secure, "
                         "tailor-secure-nozero, tailor-secure-noquarantine, scudo, "
                         "and with --base-lib: tailor-base, tailor-secure-base")
    ap.add_argument("--base-lib", help="another libtailor.so (e.g. built from an older commit in a git worktree), "
                                       "run as tailor-base and tailor-secure-base in the same rounds")
    ap.add_argument("--args", action="append", metavar="NAME=ARGS",
                    help="run workload NAME (NAME@label for another row of one program) with ARGS; repeatable")
    ap.add_argument("--cpu", type=int, default=0,
                    help="CPU that one-thread workloads run pinned to, for every allocator (default 0; -1: unpinned)")
    ap.add_argument("--scaling", action="store_true", help="also measure 1 vs 2 threads")
    ap.add_argument("--scaling-only", action="store_true", help="only measure 1 vs 2 threads")
    args = ap.parse_args()
    tailor = os.path.abspath(os.path.join(args.build, "lib", "libtailor.so"))
    table = dict(PEERS, tailor=tailor, scudo=SCUDO)
    table["tailor-secure"] = tailor
    table["tailor-secure-nozero"] = table["tailor-secure-noquarantine"] = tailor
    if args.base_lib:
        table["tailor-base"] = table["tailor-secure-base"] = os.path.abspath(args.base_lib)
    allocators = {}
    if args.base_lib and not os.path.exists(table["tailor-base"]):
        sys.exit(f"alloc_compare: --base-lib {args.base_lib}: no such file")
    for a in args.allocators.split(","):
        if a not in table:
            needs = " (it needs --base-lib)" if a in ("tailor-base", "tailor-secure-base") else ""
            sys.exit(f"alloc_compare: unknown allocator {a}{needs}")
        if table[a] and not os.path.exists(table[a]):
            sys.exit(f"alloc_compare: {table[a]} not found (make deps installs the peers)")
        allocators[a] = table[a]
    if "tailor" not in allocators:
        sys.exit("alloc_compare: the ratios are to libtailor; keep it in --allocators")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Machine: {os.cpu_count()} CPUs, {os.uname().release}, load average at the start {load}; "
          f"commands: {' '.join(sys.argv)}")
    print("One-thread workloads pinned to CPU " + str(args.cpu) + "\n" if args.cpu >= 0 else "Unpinned\n")
    if not args.scaling_only:
        compare(args, allocators)
    if args.scaling or args.scaling_only:
        scaling(args, allocators)


if __name__ == "__main__":
    main()
