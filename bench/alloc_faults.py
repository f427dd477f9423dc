#!/usr/bin/env python3
"""Injected OS failures over the allocator benchmarks (issue 17, "Faults").

Runs the ten programs of bench/alloc under libtailor-fault.so (libtailor
with fault injection in its OS layer; a test build, never installed), each
once per setting TAILOR_FAULT_INJECT=AFTER,COUNT,OPS: after AFTER calls of
the kinds in OPS (mmap, madvise, mremap), the next COUNT calls fail (-1:
all of them, for the rest of the run), under libtailor's defaults and with
purging at once. Each run ends one of three ways:

- completed: exit 0 and the same output as a run without injection (every
  program checks its blocks and prints deterministic results), so no block
  lost its contents;
- out of memory: malloc returned NULL (errno ENOMEM) and the program said
  "out of memory" and exited with status 1, as bench/alloc's programs do;
- anything else is a failure: a signal (a crash), another status or
  message, other output, or no end within the time limit (a hang).

The fault library prints at exit how many calls it failed; the table sums
them. Exits with status 1 if any run failed, or if fewer than --min-failures
failures were injected in all.

usage: alloc_faults.py [--build build] [--programs a,b] [--configs default,purge-now]
                       [--settings N] [--min-failures N] [--scale F]
"""
import argparse
import os
import re
import subprocess
import sys

PROGRAMS = ["mt_random_small", "mt_producer_consumer", "mt_server", "mt_false_sharing", "realloc_grow",
            "large_churn", "mt_larson", "random_replace", "huge_churn", "mt_burst_pass"]
# Smaller than the benchmarks' defaults (a quarter or less), so that purging
# at once does not make a run last long: the campaign is about failures.
ARGS = {"mt_random_small": ["--size", "5000000"], "mt_producer_consumer": ["--size", "1000000"],
        "mt_server": ["--size", "1000000"], "mt_false_sharing": ["--size", "50000"], "realloc_grow": ["--size", "3"],
        "large_churn": ["--size", "1000"], "random_replace": ["--size", "500000"], "huge_churn": ["--size", "50"]}
# Configurations of libtailor: its defaults, and purging and unmapping at
# once (TAILOR_PURGE_DELAY=0, TAILOR_HUGE_CACHE=0), which makes many more OS
# calls to refuse.
CONFIGS = {"default": {}, "purge-now": {"TAILOR_PURGE_DELAY": "0", "TAILOR_HUGE_CACHE": "0"}}
# Calls refused (os.h, FaultOp): every kind, madvise only (memory that cannot
# be given back, never a NULL), mmap and mremap only (memory that cannot be had).
OPS = {7: "mmap, madvise, mremap", 2: "madvise", 5: "mmap, mremap"}
# (config, ops, after, count): a failure early and late, a window the
# allocator must recover from, and the OS refusing from some point on.
SETTINGS = [(cfg, ops, after, count) for cfg in CONFIGS for ops in OPS for after in (0, 200, 20000)
            for count in (1, 100, -1)]
REPORT = re.compile(r"^tailor-fault: (\d+) injected failures$", re.M)


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or "", e.stderr or ""


def scaled(argv, scale):
    """argv with its --size value multiplied by scale (at least 1)."""
    out = list(argv)
    if "--size" in out:
        i = out.index("--size") + 1
        out[i] = str(max(1, int(int(out[i]) * scale)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--configs", default=",".join(CONFIGS), help="of " + ", ".join(CONFIGS))
    ap.add_argument("--settings", type=int, default=len(SETTINGS), help="use the first N settings of each config")
    ap.add_argument("--min-failures", type=int, default=0, help="fail unless at least this many were injected")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies each program's --size (ctest's short campaign: 0.3)")
    args = ap.parse_args()
    if not 0 < args.scale <= 1:
        sys.exit(f"alloc_faults: --scale {args.scale}: must be in (0, 1]")
    lib = os.path.join(args.build, "lib", "libtailor-fault.so")
    if not os.path.exists(lib):
        sys.exit(f"alloc_faults: {lib} not found (a build with tests: ninja -C {args.build} tailor_alloc_fault)")
    base_env = dict(os.environ, TAILOR_CONFIG="/dev/null")
    for k in ("LD_PRELOAD", "TAILOR_FAULT_INJECT"):
        base_env.pop(k, None)

    rows, total_failures, bad = [], 0, []
    for name in args.programs.split(","):
        cmd = [os.path.join(args.build, "bin", "ab_" + name)] + scaled(ARGS.get(name, []), args.scale)
        rc, ref, err = run(cmd, dict(base_env, LD_PRELOAD=lib), args.timeout)
        if rc != 0:
            sys.exit(f"alloc_faults: {name} fails without injection: status {rc}: {err.strip()[-300:]}")
        counts = {"completed": 0, "out of memory": 0, "failed": 0}
        injected = 0
        chosen = [c for c in CONFIGS if c in args.configs.split(",")]
        for cfg, ops, after, count in [st for c in chosen for st in [x for x in SETTINGS if x[0] == c][: args.settings]]:
            env = dict(base_env, LD_PRELOAD=lib, TAILOR_FAULT_INJECT=f"{after},{count},{ops}", **CONFIGS[cfg])
            rc, out, err = run(cmd, env, args.timeout)
            m = REPORT.findall(err)
            failures = int(m[-1]) if m else 0
            injected += failures
            if rc == 0 and out == ref:
                counts["completed"] += 1
            elif rc == 1 and "out of memory" in err and not out.strip():
                counts["out of memory"] += 1
            else:
                counts["failed"] += 1
                how = "timed out" if rc is None else (f"signal {-rc}" if rc < 0 else f"status {rc}")
                bad.append(f"{name} ({cfg}) TAILOR_FAULT_INJECT={after},{count},{ops}: {how}; "
                           f"stderr: {' '.join(err.split())[-300:]}; stdout {'equal' if out == ref else 'differs'}")
        total_failures += injected
        rows.append((name, injected, counts))
        print(f"[{name}] {injected} injected failures, {counts}", file=sys.stderr, flush=True)

    print(f"Settings per program: libtailor's defaults and purging at once (--configs {args.configs}), times the calls refused "
          f"({'; '.join(OPS.values())}), times TAILOR_FAULT_INJECT=after,count with after 0, 200 and 20000 calls "
          f"and count 1, 100 or all the rest\n")
    print("| program | injected failures | completed, same output | out of memory (NULL, clean exit) | failed |")
    print("|---|---:|---:|---:|---:|")
    for name, injected, c in rows:
        print(f"| {name} | {injected} | {c['completed']} | {c['out of memory']} | {c['failed']} |")
    runs = sum(sum(c.values()) for _, _, c in rows)
    print(f"| **all** | **{total_failures}** | **{sum(c['completed'] for _, _, c in rows)}** | "
          f"**{sum(c['out of memory'] for _, _, c in rows)}** | **{len(bad)}** |")
    print(f"\n{runs} runs, {total_failures} injected failures, {len(bad)} failed runs")
    for b in bad:
        print("FAILED: " + b)
    if bad or total_failures < args.min_failures:
        if total_failures < args.min_failures:
            print(f"fewer than {args.min_failures} failures injected")
        sys.exit(1)


if __name__ == "__main__":
    main()
