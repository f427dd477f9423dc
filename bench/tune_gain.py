#!/usr/bin/env python3
"""`tailor tune` on the ten bundled workloads (issue 14): for each workload and
objective, one `tailor tune --json` at the given budget, and a table of what
it found: on the replay of the trace (allocation calls only, the tunable allocator paper's
measure), the winner against glibc and default libtailor; on the program's
own runs, the winner against default libtailor (time and peak RSS), the
winner's settings, or why no configuration was kept.

    bench/tune_gain.py --build build [--objectives time,memory] [--budget 120]
                       [--workloads cfrac,...] [--out results.json]

Each tune interleaves its own rounds (replays and real runs) against default
libtailor and glibc, so a ratio compares configurations measured under the
same load; the machine's load is printed with the table.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

# --size per workload: at most about 10 M trace events, runs of 0.2-1.5 s
# (the search benchmarks' sizes, bench/search_gain.py).
SIZES = {"hypercube_net": 2000000, "cfrac": 6, "boolean_sets": 400, "gc_trees": 14,
         "boxed_spheres": 2000, "robot_kinematics": 1500, "list_kernel": 500000,
         "tree_kernel": 300000, "olden_treeadd": 19, "olden_health": 500}


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def row(rows, label):
    for r in rows:
        if r["configuration"] == label:
            return r
    return None


def summarize(j):
    """The figures of one tune: the kept configuration's, or default libtailor's when none was kept."""
    win = j["winner"]
    rep, real = j["replay"]["rows"], j["real"]["rows"]
    dflt_rep, glibc_rep = row(rep, "libtailor (default)"), row(rep, "glibc")
    w_rep = row(rep, win) if win else dflt_rep
    w_real = row(real, win) if win else row(real, "libtailor (default)")
    glibc_real = row(real, "glibc")
    fin = next((f for f in j["finalists"] if f["label"] == win), None)
    why = "; ".join(f"{f['label']}: {f['why_not']}" for f in j["finalists"] if f["why_not"])
    return {
        "winner": win or "default",
        "settings": fin["settings"] if fin else "-",
        # Replay: the winner's loop time over glibc's (medians), and its per-round ratio to default.
        "replay_vs_glibc": w_rep["seconds"] / glibc_rep["seconds"],
        "replay_vs_default": w_rep["time_vs_default"],
        "replay_heap_vs_default": w_rep["peak_vs_default"],
        "real_vs_default": w_real["time_vs_default"],
        "real_rss_vs_default": w_real["peak_vs_default"],
        "real_vs_glibc": w_real["seconds"] / glibc_real["seconds"],
        "rounds": f"{j['replay']['rounds']}/{j['real']['rounds']}",
        "seconds": j["seconds"],
        "why_none": "" if win else (why or "no finalist"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--objectives", default="time,memory")
    ap.add_argument("--budget", type=float, default=None, help="tailor tune --budget (default: its own default)")
    ap.add_argument("--workloads", default=",".join(SIZES))
    ap.add_argument("--out", default=None, help="write every tune's JSON and the summaries here")
    args = ap.parse_args()
    tailor = os.path.join(args.build, "bin", "tailor")
    results = {}
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for objective in args.objectives.split(","):
            for name in args.workloads.split(","):
                exe = os.path.join(args.build, "bin", f"wl_{name}")
                cmd = [tailor, "tune", "--objective", objective, "--json", "-o", os.path.join(tmp, "t.conf")]
                if args.budget:
                    cmd += ["--budget", str(args.budget)]
                cmd += ["--", exe, "--size", str(SIZES[name])]
                print(f"[{objective}] {name}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
                t0 = time.time()
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                if p.returncode != 0:
                    print(f"  failed with status {p.returncode}", file=sys.stderr)
                    continue
                j = json.loads(p.stdout)
                s = summarize(j)
                results.setdefault(objective, {})[name] = {"summary": s, "tune": j}
                print(f"  {time.time() - t0:.0f} s: {s['winner']} ({s['settings']})", file=sys.stderr, flush=True)
    load_end = os.getloadavg()
    print(f"machine load (1-minute average) at the start {load_start[0]:.2f}, at the end {load_end[0]:.2f} "
          f"(5-minute {load_end[1]:.2f}, 15-minute {load_end[2]:.2f})")
    for objective, per in results.items():
        print(f"\n--objective {objective}\n")
        print("| workload | kept | replay vs glibc | replay vs default | real time vs default | real peak RSS vs default "
              "| rounds (replay/real) | tune s | settings, or why none |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for name, r in per.items():
            s = r["summary"]
            print(f"| {name} | {s['winner']} | {s['replay_vs_glibc']:.3f}x | {s['replay_vs_default']:.3f}x | "
                  f"{s['real_vs_default']:.3f}x | {s['real_rss_vs_default']:.3f}x | {s['rounds']} | {s['seconds']:.0f} | "
                  f"{s['settings'] if s['winner'] != 'default' else s['why_none']} |")
        vals = [r["summary"] for r in per.values()]
        print(f"| geometric mean | | {geomean([v['replay_vs_glibc'] for v in vals]):.3f}x | "
              f"{geomean([v['replay_vs_default'] for v in vals]):.3f}x | {geomean([v['real_vs_default'] for v in vals]):.3f}x | "
              f"{geomean([v['real_rss_vs_default'] for v in vals]):.3f}x | | | |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
