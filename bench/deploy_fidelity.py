#!/usr/bin/env python3
"""The simulator against reality on the ten bundled workloads (docs/deploy.md).

For each workload, recorded at the sizes of search_gain.py (at most 10 M
events; --small: about 1 M) into --traces:
  1. a default `tailor search` (seed --seed) writes the found DMM;
  2. `tailor validate` on the trace with kng, lea, fib, s10, exa and the
     found DMM, at its default tolerance (2%): simulated against real
     resident memory (pages of the held ranges + the DMM's own state) and
     held bytes, and the time model's prediction against real replay time,
     each normalized to Kingsley (Spearman of the rankings, differences);
  3. `tailor replay` of the trace on libtailor, glibc and the found DMM (with
     its front): the found DMM's replay time against default libtailor's,
     and its resident memory as simulated;
  4. with --programs, the workload itself under glibc, libtailor, the peers
     and TAILOR_DMM=kng (wall time, peak RSS).
Prints markdown tables for docs/BENCHMARKS.md with the targets' verdicts;
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
    ap.add_argument("--programs", action="store_true", help="also run each workload itself under the peers")
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
        v = run_json([tailor, "validate", trace, "--dmm", ",".join(DMMS + [found]), "--runs", str(args.runs), "--json"],
                     ok=(0, 3))
        log(f"[{name}] replay")
        allocs = ["libtailor", "glibc", found] + (["mimalloc", "jemalloc", "tcmalloc", "kng"] if args.programs else [])
        rp = run_json([tailor, "replay", trace, "--alloc", ",".join(allocs), "--runs", str(args.runs), "--json"])
        results[name] = {"validate": v, "replay": rp}
        if args.programs:
            log(f"[{name}] the program itself")
            envs = {"glibc": {}, "libtailor": {"LD_PRELOAD": lib}, "kng": {"LD_PRELOAD": lib, "TAILOR_DMM": "kng"}}
            envs.update({k: {"LD_PRELOAD": v_} for k, v_ in PEERS.items()})
            prog = {k: [] for k in envs}
            for _ in range(args.runs):
                for k, env in envs.items():
                    prog[k].append(program_rss(exe, size, env))
            results[name]["program"] = {k: {"seconds": statistics.median(t for t, _ in r),
                                            "peak_rss_kib": statistics.median(m for _, m in r)} for k, r in prog.items()}
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)

    # ---- tables
    print("### Memory: simulated against real (high-water marks, bytes)\n")
    print("resident: pages of the held ranges + the DMM's own state; held: bytes obtained - returned; "
          "diff: real against simulated\n")
    print("| workload | DMM | resident simulated | resident real | diff | held simulated | held real | diff |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    pairs = within = passed = 0
    for name, r in results.items():
        ok = True
        for d in r["validate"]["dmms"]:
            label = "found" if d["dmm"].endswith(".json") else d["dmm"]
            diff, held = d["difference_pct"]["memory"], d["difference_pct"]["held"]
            pairs += 1
            within += abs(diff) <= 2
            ok = ok and abs(diff) <= 2
            print(f"| {name} | {label} | {d['simulated']['memory_usage_bytes']:,} | "
                  f"{d['real']['os_high_water_bytes']:,.0f} | {diff:+.2f}% | {d['simulated']['held_usage_bytes']:,} | "
                  f"{d['real']['held_high_water_bytes']:,.0f} | {held:+.2f}% |")
        passed += ok and r["validate"]["within_tolerance"]
    print(f"\nResident memory within 2%: {within} of {pairs} pairs; `tailor validate` at its default tolerance "
          f"passed on {passed} of {len(results)} workloads.\n")

    print("### Time: the time model against real replay time (each over Kingsley's)\n")
    print("| workload | Spearman | " + " | ".join(DMMS[1:] + ["found"]) + " | worst |")
    print("|---|---:|" + "---:|" * (len(DMMS) + 1))
    ranked = within10 = 0
    for name, r in results.items():
        rho = r["validate"]["spearman_time"]
        diffs = [d["difference_pct"]["time_normalized"] for d in r["validate"]["dmms"]]
        ranked += rho is not None and rho >= 0.8
        worst = max(abs(x) for x in diffs)
        within10 += worst <= 10
        cells = " | ".join(f"{d['normalized_to_kng']['simulated_time']:.2f} / {d['normalized_to_kng']['real_time']:.2f}"
                           for d in r["validate"]["dmms"][1:])
        print(f"| {name} | {'-' if rho is None else f'{rho:.2f}'} | {cells} | {worst:.1f}% |")
    print(f"\ncells: simulated / real, over Kingsley's. Spearman at least 0.8: {ranked} of {len(results)} workloads; "
          f"every DMM within 10%: {within10} of {len(results)}.\n")

    print("### The found DMM for real, with its front: replay against default libtailor\n")
    print("| workload | libtailor s | found s | found / libtailor (median of the rounds' ratios) | resident simulated | resident real | diff |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for name, r in results.items():
        by = {("found" if a["name"].endswith(".json") else a["name"]): a for a in r["replay"]["allocators"]}
        m = {k: a["median"] for k, a in by.items()}
        f = next(d for d in r["validate"]["dmms"] if d["dmm"].endswith(".json"))
        # The median of the per-round ratios: the two ran back to back in
        # each round, so a host that changes speed between rounds (this
        # VM's does, by up to 2x) moves both.
        ratio = statistics.median(x["seconds"] / l["seconds"]
                                  for l, x in zip(by["libtailor"]["runs"], by["found"]["runs"]))
        ratios.append(ratio)
        print(f"| {name} | {m['libtailor']['seconds']:.3f} | {m['found']['seconds']:.3f} | {ratio:.2f} | "
              f"{f['simulated']['memory_usage_bytes']:,} | {f['real']['os_high_water_bytes']:,.0f} | "
              f"{f['difference_pct']['memory']:+.2f}% |")
    print(f"\nGeometric mean found / libtailor: {geomean(ratios):.3f}.\n")
    if not any("program" in r for r in results.values()):
        return

    print("### Replay against the program itself (seconds, medians)\n")
    print("| workload | allocator | program | replay | replay / program |")
    print("|---|---|---:|---:|---:|")
    worst = 0
    same_fastest = 0
    for name, r in results.items():
        rep = {a["name"]: a["median"]["seconds"] for a in r["replay"]["allocators"] if not a["name"].endswith(".json")}
        if not all(k in rep for k in ("mimalloc", "jemalloc", "tcmalloc", "kng")):
            continue
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
