#!/usr/bin/env python3
"""Issue 12's targets on the ten bundled workloads (docs/deploy.md).

For each workload, recorded at the sizes of search_gain.py (at most 10 M
events; --small: about 1 M) into --traces:
  1. a default `tailor search` (seed --seed) writes the found DMM;
  2. `tailor validate` on the trace with kng, lea, fib, s10, exa and the
     found DMM: simulated against real memory (high-water mark of bytes held
     from the system: pages + the DMM's own state, and as the simulator
     counts, bytes obtained - returned), and the Spearman correlation of
     simulated steps with real replay time;
  3. `tailor replay` of the trace on glibc, libtailor, the peers, KNG and the
     found DMM: peak RSS of the found DMM against glibc's and libtailor's;
  4. the workload itself, interleaved rounds, under glibc, libtailor, the
     peers and TAILOR_DMM=kng: wall time and peak RSS, so that replay time
     compares with the program's own, the fastest allocator of each, and
     KNG's time with glibc's.
Prints markdown tables for docs/BENCHMARKS.md and the targets' verdicts;
progress goes to stderr.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_gain import SEARCH_SIZES, SMALL_SIZES  # noqa: E402

LIBDIR = "/usr/lib/x86_64-linux-gnu"
PEERS = {"mimalloc": f"{LIBDIR}/libmimalloc.so.2", "jemalloc": f"{LIBDIR}/libjemalloc.so.2",
         "tcmalloc": f"{LIBDIR}/libtcmalloc_minimal.so.4"}
DMMS = ["kng", "lea", "fib", "s10", "exa"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_json(cmd, ok=(0,)):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)}: exit status {p.returncode}")
    return json.loads(p.stdout)


def program_rss(exe, size, env):
    """Wall time and peak RSS (KiB, from /usr/bin/time) of one run of a workload in a fresh process."""
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.pop("TAILOR_DMM", None)
    full.update(env)
    start = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", exe, "--size", str(size)], env=full,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    if p.returncode != 0 or "tailor:" in p.stderr:
        raise SystemExit(f"{exe} under {env}: exit {p.returncode}: {p.stderr}")
    return wall, int(p.stderr.strip().splitlines()[-1])


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--traces", default=None, help="traces and found specs (default: BUILD/deploy)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3, help="interleaved rounds of every real measurement")
    ap.add_argument("--workloads", default=",".join(SEARCH_SIZES))
    ap.add_argument("--small", action="store_true", help="traces of about 1 M events")
    ap.add_argument("--json", default=None, help="write every measurement to this file")
    args = ap.parse_args()
    sizes = SMALL_SIZES if args.small else SEARCH_SIZES
    build = os.path.abspath(args.build)
    tailor = os.path.join(build, "bin", "tailor")
    lib = os.path.join(build, "lib", "libtailor.so")
    traces = os.path.abspath(args.traces or os.path.join(build, "deploy"))
    os.makedirs(traces, exist_ok=True)

    results = {}
    for name in args.workloads.split(","):
        size = sizes[name]
        exe = os.path.join(build, "bin", f"wl_{name}")
        trace = os.path.join(traces, f"{name}-{size}.trace")
        if not os.path.exists(trace):
            log(f"[{name}] recording at --size {size}")
            subprocess.run([tailor, "record", "-q", "-o", trace, "--", exe, "--size", str(size)], check=True,
                           stdout=subprocess.DEVNULL)
        found = os.path.join(traces, f"{name}.found.json")
        if not os.path.exists(found):
            log(f"[{name}] search")
            subprocess.run([tailor, "search", trace, "-o", found, "--seed", str(args.seed)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        log(f"[{name}] validate")
        v = run_json([tailor, "validate", trace, "--dmm", ",".join(DMMS + [found]), "--runs", str(args.runs),
                      "--tolerance", "1e6", "--json"])
        log(f"[{name}] replay")
        allocs = ["glibc", "libtailor", "mimalloc", "jemalloc", "tcmalloc", "kng", found]
        rp = run_json([tailor, "replay", trace, "--alloc", ",".join(allocs), "--runs", str(args.runs), "--json"])
        log(f"[{name}] the program itself")
        envs = {"glibc": {}, "libtailor": {"LD_PRELOAD": lib}, "kng": {"LD_PRELOAD": lib, "TAILOR_DMM": "kng"}}
        envs.update({k: {"LD_PRELOAD": v_} for k, v_ in PEERS.items()})
        prog = {k: [] for k in envs}
        for _ in range(args.runs):
            for k, env in envs.items():
                prog[k].append(program_rss(exe, size, env))
        results[name] = {"validate": v, "replay": rp,
                         "program": {k: {"seconds": statistics.median(t for t, _ in r),
                                         "peak_rss_kib": statistics.median(m for _, m in r)} for k, r in prog.items()}}
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)

    # ---- tables
    print("### Fidelity: simulated against real memory (high-water mark, bytes)\n")
    print("real: pages of the held ranges + the DMM's own state; as simulated: bytes obtained - returned, "
          "counted in the real run; diff: real against simulated\n")
    print("| workload | DMM | simulated | real | diff | as simulated | diff |")
    print("|---|---|---:|---:|---:|---:|---:|")
    pairs_within = pairs = pairs_as_sim = 0
    rhos = []
    for name, r in results.items():
        for d in r["validate"]["dmms"]:
            label = "found" if d["dmm"].endswith(".json") else d["dmm"]
            diff, diff_sim = d["difference_pct"]["memory"], d["difference_pct"]["memory_as_simulated"]
            pairs += 1
            pairs_within += abs(diff) <= 2
            pairs_as_sim += abs(diff_sim) <= 2
            print(f"| {name} | {label} | {d['simulated']['memory_usage_bytes']:,} | "
                  f"{d['real']['os_high_water_bytes']:,.0f} | {diff:+.2f}% | {d['real']['held_high_water_bytes']:,.0f} | "
                  f"{diff_sim:+.2f}% |")
        rhos.append((name, r["validate"]["spearman_time"]))
    print(f"\nWithin 2%: {pairs_within} of {pairs} pairs (real pages + state), {pairs_as_sim} of {pairs} "
          f"(as simulated).\n")
    print("### Fidelity: time rankings (Spearman of simulated steps with real replay time, six DMMs)\n")
    print("| workload | Spearman |")
    print("|---|---:|")
    for name, rho in rhos:
        print(f"| {name} | {'-' if rho is None else f'{rho:.2f}'} |")
    print(f"\nAt least 0.8: {sum(1 for _, r in rhos if r is not None and r >= 0.8)} of {len(rhos)} workloads.\n")

    print("### The found DMM for real: peak RSS of the replay (MiB, VmHWM minus RSS before the loop)\n")
    print("| workload | glibc | libtailor | found | found / glibc | found / libtailor |")
    print("|---|---:|---:|---:|---:|---:|")
    wins = 0
    for name, r in results.items():
        m = {a["name"] if not a["name"].endswith(".json") else "found": a["median"] for a in r["replay"]["allocators"]}
        g, t, f = (m[k]["peak_rss_delta_bytes"] / 2**20 for k in ("glibc", "libtailor", "found"))
        wins += f < g and f < t
        print(f"| {name} | {g:.2f} | {t:.2f} | {f:.2f} | {f / g:.2f} | {f / t:.2f} |")
    print(f"\nBelow both: {wins} of {len(results)} workloads.\n")

    print("### Replay against the program itself (seconds, medians)\n")
    print("| workload | allocator | program | replay | replay / program |")
    print("|---|---|---:|---:|---:|")
    worst = 0
    same_fastest = 0
    for name, r in results.items():
        rep = {a["name"]: a["median"]["seconds"] for a in r["replay"]["allocators"] if not a["name"].endswith(".json")}
        for k in ("glibc", "libtailor", "mimalloc", "jemalloc", "tcmalloc", "kng"):
            p = r["program"][k]["seconds"]
            worst = max(worst, rep[k] / p)
            print(f"| {name} | {k} | {p:.3f} | {rep[k]:.3f} | {rep[k] / p:.2f} |")
        peers = ("glibc", "libtailor", "mimalloc", "jemalloc", "tcmalloc")
        fp = min(peers, key=lambda k: r["program"][k]["seconds"])
        fr = min(peers, key=lambda k: rep[k])
        same_fastest += fp == fr
        print(f"| {name} | fastest | {fp} | {fr} | |")
    print(f"\nWorst replay / program: {worst:.2f}; same fastest allocator: {same_fastest} of {len(results)}.\n")
    kng = [r["program"]["kng"]["seconds"] / r["program"]["glibc"]["seconds"] for r in results.values()]
    print(f"KNG for real / glibc, the programs themselves: geometric mean {geomean(kng):.3f} "
          f"(per workload: {', '.join(f'{x:.2f}' for x in kng)}).")


if __name__ == "__main__":
    main()
