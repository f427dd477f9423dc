#!/usr/bin/env python3
"""Recording overhead and trace size of `tailor record` on the bundled
workloads, with heaptrack (Debian package) measured in the same run as the
peer. Prints a markdown table for docs/BENCHMARKS.md.

Each configuration runs --runs times, in interleaved rounds (every workload
unrecorded and recorded once per round; heaptrack after the rounds); the
table shows medians of wall time.
Ratios are recorded time / unrecorded time (lower is better).

--stacks adds `tailor record --stacks` (whole call stacks, the recorder's
DWARF walk) to every round, --stacks-libunwind the same with libunwind's
unw_backtrace, and --stacks-fp the frame-pointer walk (right only for code
built with frame pointers; the bundled workloads are not: it shows the walk's
cost).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = ["hypercube_net", "cfrac", "boolean_sets", "gc_trees", "boxed_spheres",
             "robot_kinematics", "list_kernel", "tree_kernel", "olden_treeadd", "olden_health",
             "olden_em3d", "olden_mst", "olden_tsp", "olden_perimeter", "olden_bisort", "ptrdist_ft"]


def timed(cmd, env=None, cwd=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"record_overhead: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout, proc.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory (default: build)")
    ap.add_argument("--runs", type=int, default=3, help="runs per configuration (median is reported)")
    ap.add_argument("--heaptrack-runs", type=int, default=1, help="runs of heaptrack --raw (slow)")
    ap.add_argument("--no-heaptrack", action="store_true", help="skip the heaptrack peer")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated subset")
    ap.add_argument("--stacks", action="store_true", help="also tailor record --stacks")
    ap.add_argument("--stacks-libunwind", action="store_true", help="also tailor record --stacks --unwind libunwind")
    ap.add_argument("--stacks-fp", action="store_true", help="also tailor record --stacks --unwind fp")
    args = ap.parse_args()

    tailor = os.path.abspath(os.path.join(args.build, "bin", "tailor"))
    heaptrack = shutil.which("heaptrack")
    use_heaptrack = heaptrack and not args.no_heaptrack
    rows = []
    tmp = tempfile.mkdtemp(prefix="tailor-bench-")
    try:
        names = args.workloads.split(",")
        base = {n: [] for n in names}
        rec = {n: [] for n in names}
        events, size = {}, {}
        modes = [("record", [])]
        if args.stacks:
            modes.append(("stacks", ["--stacks"]))
        if args.stacks_libunwind:
            modes.append(("stacks-libunwind", ["--stacks", "--unwind", "libunwind"]))
        if args.stacks_fp:
            modes.append(("stacks-fp", ["--stacks", "--unwind", "fp"]))
        extra = {mode: {n: [] for n in names} for mode, _ in modes[1:]}
        extra_size = {mode: {} for mode, _ in modes[1:]}
        # Interleaved rounds: each round runs every workload once unrecorded and
        # once recorded, so that the machine's drift over minutes touches both alike.
        for i in range(args.runs):
            for name in names:
                exe = os.path.abspath(os.path.join(args.build, "bin", f"wl_{name}"))
                print(f"[{name}] round {i + 1}/{args.runs}: unrecorded, then tailor record", file=sys.stderr, flush=True)
                base[name].append(timed([exe])[0])
                for mode, options in modes:
                    trace = os.path.join(tmp, f"{name}.trace")
                    t, _, err = timed([tailor, "record", *options, "-o", trace, "--", exe])
                    m = re.search(r"(\d+) events, \d+ threads, (\d+) bytes", err)
                    if not m:
                        sys.exit(f"record_overhead: cannot read the summary of tailor record:\n{err}")
                    if mode == "record":
                        rec[name].append(t)
                        events[name], size[name] = int(m.group(1)), int(m.group(2))
                    else:
                        extra[mode][name].append(t)
                        extra_size[mode][name] = int(m.group(2)) / max(1, int(m.group(1)))
                    os.remove(trace)
        for name in names:
            exe = os.path.abspath(os.path.join(args.build, "bin", f"wl_{name}"))
            ht = []
            if use_heaptrack:
                for i in range(args.heaptrack_runs):
                    print(f"[{name}] heaptrack --raw {i + 1}/{args.heaptrack_runs}", file=sys.stderr, flush=True)
                    out = os.path.join(tmp, f"{name}.heaptrack")
                    ht.append(timed([heaptrack, "--raw", "-o", out, exe], cwd=tmp)[0])
                    for f in os.listdir(tmp):
                        if f.startswith(f"{name}.heaptrack"):
                            os.remove(os.path.join(tmp, f))
            b, r = statistics.median(base[name]), statistics.median(rec[name])
            h = statistics.median(ht) if ht else None
            rows.append((name, b, r, h, events[name], size[name],
                         {mode: (statistics.median(extra[mode][name]), extra_size[mode][name]) for mode in extra}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    modes_shown = list(rows[0][6]) if rows else []
    head = "| workload | unrecorded (s) | tailor record (s) | tailor / unrecorded |"
    rule = "|---|---:|---:|---:|"
    for mode in modes_shown:
        head += f" {mode} (s) | {mode} / unrecorded | {mode} / heaptrack | {mode} bytes / event |"
        rule += "---:|---:|---:|---:|"
    print(head + " heaptrack --raw (s) | heaptrack / unrecorded | events | trace bytes | bytes / event |")
    print(rule + "---:|---:|---:|---:|---:|")
    ratios, bpe = [], []
    mode_ratios = {mode: [] for mode in modes_shown}
    mode_vs_ht = {mode: [] for mode in modes_shown}
    mode_bpe = {mode: [] for mode in modes_shown}
    for name, b, r, h, events, size, more in rows:
        ratios.append(r / b)
        bpe.append(size / events if events else 0)
        hs = f"{h:.2f}" if h is not None else "-"
        hr = f"{h / b:.2f}x" if h is not None else "-"
        cells = ""
        for mode in modes_shown:
            t, per_event = more[mode]
            mode_ratios[mode].append(t / b)
            mode_bpe[mode].append(per_event)
            vs = f"{t / h:.2f}" if h is not None else "-"
            if h is not None:
                mode_vs_ht[mode].append(t / h)
            cells += f" {t:.2f} | {t / b:.2f}x | {vs} | {per_event:.2f} |"
        print(f"| {name} | {b:.2f} | {r:.2f} | {r / b:.2f}x |{cells} {hs} | {hr} | {events:,} | {size:,} | {size / events:.2f} |")
    geo = statistics.geometric_mean(ratios)
    hts = [row[3] / row[1] for row in rows if row[3] is not None]
    hgeo = f"{statistics.geometric_mean(hts):.2f}x" if hts else "-"
    cells = ""
    for mode in modes_shown:
        vs = f"**{max(mode_vs_ht[mode]):.2f}** (most)" if mode_vs_ht[mode] else "-"
        cells += (f" | **{statistics.geometric_mean(mode_ratios[mode]):.2f}x** | {vs} |"
                  f" **{max(mode_bpe[mode]):.2f}** (most) |")
    print(f"| **geometric mean** | | | **{geo:.2f}x** |{cells} | **{hgeo}** | | | **{statistics.mean(bpe):.2f}** (mean) |")


if __name__ == "__main__":
    main()
