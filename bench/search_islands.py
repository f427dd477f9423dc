#!/usr/bin/env python3
"""The island model on MPI against one population, and one DMM for the ten
bundled workloads (issue 20's three targets). Prints markdown for
docs/BENCHMARKS.md.

1. Throughput: for each of the ten traces (search_gain.py's --small sizes,
   about 1 M events, recorded into --traces), `tailor search --threads 1`
   (one rank, one population) against `mpirun -np 2 --oversubscribe tailor
   search --threads 1` (two ranks, two islands sharing the same total
   population), --rounds interleaved rounds (the order alternates), medians.
   Evaluations per second are the search's own (evaluations / its seconds,
   trace loading and MPI start-up excluded); CPU seconds are the process
   tree's (getrusage of the children); the wall time includes everything.
2. Quality at an equal number of evaluations: the best fitness (measured on
   the whole trace) of the same two searches (deterministic: the same every round).
3. One DMM for the ten traces: `mpirun -np 2 tailor search T1..T10
   --aggregate mean`: the found DMM's fitness on each trace against
   Kingsley's (1) and, in the aggregate, against each classic DMM.
4. Costs of the island model (rank 0's figures from a 2-rank run with a
   checkpoint every 10 generations): evaluation time per generation,
   migration time, checkpoint time and bytes per island; and the modelled
   time per generation at 64-1024 ranks.

The load average is printed before and after: on a shared machine the
figures move; re-run on a quiet one.
"""
import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("search_gain", os.path.join(HERE, "search_gain.py"))
search_gain = importlib.util.module_from_spec(spec)
spec.loader.exec_module(search_gain)
BUILT_INS = ["kng", "lea", "fib", "s10", "exa"]
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def load():
    return open("/proc/loadavg").read().split()[:3]


def timed(cmd, env=None):
    """(parsed JSON output, wall seconds, CPU seconds of the process tree)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env).stdout
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out), wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--traces", default=None, help="directory of the traces (default: BUILD/search)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--generations", type=int, default=40)
    ap.add_argument("--population", type=int, default=60)
    ap.add_argument("--multi-generations", type=int, default=40, help="generations of the ten-trace search")
    ap.add_argument("--workloads", default=",".join(search_gain.SMALL_SIZES))
    ap.add_argument("--skip-multi", action="store_true")
    args = ap.parse_args()

    tailor = os.path.abspath(os.path.join(args.build, "bin", "tailor"))
    traces_dir = os.path.abspath(args.traces or os.path.join(args.build, "search"))
    os.makedirs(traces_dir, exist_ok=True)
    names = args.workloads.split(",")
    traces = {}
    for name in names:
        size = search_gain.SMALL_SIZES[name]
        trace = os.path.join(traces_dir, f"{name}-{size}.trace")
        if not os.path.exists(trace):
            print(f"[{name}] recording at --size {size}", file=sys.stderr, flush=True)
            exe = os.path.abspath(os.path.join(args.build, "bin", f"wl_{name}"))
            subprocess.run([tailor, "record", "-q", "-o", trace, "--", exe, "--size", str(size)], check=True,
                           stdout=subprocess.DEVNULL)
        traces[name] = trace

    load_before = load()
    common = ["search", "--json", "--threads", "1", "--seed", "1", "--generations", str(args.generations),
              "--population", str(args.population)]
    configs = {
        "1 rank": lambda t: [tailor] + common + [t],
        "2 ranks": lambda t: [args.mpirun, "-np", "2", "--oversubscribe", tailor] + common + [t],
    }
    runs = {(n, c): [] for n in names for c in configs}
    for r in range(args.rounds):
        order = list(configs) if r % 2 == 0 else list(reversed(configs))
        for name in names:
            for c in order:
                j, wall, cpu = timed(configs[c](traces[name]), env=MPI_ENV)
                runs[(name, c)].append((j, wall, cpu))
                print(f"[round {r + 1}] {name} {c}: {j['evaluations'] / j['seconds']:.1f} evaluations/s, "
                      f"found {j['normalized_to_kng'][-1]['fitness']:.4f}, wall {wall:.1f} s, cpu {cpu:.1f} s",
                      file=sys.stderr, flush=True)

    def med(name, c, f):
        return statistics.median(f(*x) for x in runs[(name, c)])

    print(f"Machine: {os.cpu_count()} cores; load average before {' '.join(load_before)}, after {' '.join(load())}; "
          f"{args.rounds} interleaved rounds, medians; population {args.population}, {args.generations} generations, "
          "--threads 1 per rank.\n")
    print("| workload | eval/s 1 rank | eval/s 2 ranks | ratio | CPU s 1 rank | CPU s 2 ranks | wall s 1 rank | "
          "wall s 2 ranks | allocator simulations 1 / 2 | whole-trace validations 1 / 2 | best 1 population | "
          "best 2 islands | islands as good |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    ratios, as_good = [], 0
    for name in names:
        e1 = med(name, "1 rank", lambda j, w, c: j["evaluations"] / j["seconds"])
        e2 = med(name, "2 ranks", lambda j, w, c: j["evaluations"] / j["seconds"])
        c1 = med(name, "1 rank", lambda j, w, c: c)
        c2 = med(name, "2 ranks", lambda j, w, c: c)
        w1 = med(name, "1 rank", lambda j, w, c: w)
        w2 = med(name, "2 ranks", lambda j, w, c: w)
        f1 = runs[(name, "1 rank")][0][0]["normalized_to_kng"][-1]["fitness"]
        f2 = runs[(name, "2 ranks")][0][0]["normalized_to_kng"][-1]["fitness"]
        j1, j2 = runs[(name, "1 rank")][0][0], runs[(name, "2 ranks")][0][0]
        ratios.append(e2 / e1)
        as_good += f2 <= f1
        print(f"| {name} | {e1:.1f} | {e2:.1f} | {e2 / e1:.2f}x | {c1:.1f} | {c2:.1f} | {w1:.1f} | {w2:.1f} | "
              f"{j1['allocator_simulations']} / {j2['allocator_simulations']} | {j1['validations']} / {j2['validations']} | "
              f"{f1:.4f} | {f2:.4f} | {'yes' if f2 <= f1 else 'no'} |")
    print(f"\nThroughput ratio (2 ranks / 1 rank): median {statistics.median(ratios):.2f}x, "
          f"min {min(ratios):.2f}x, max {max(ratios):.2f}x (target >= 1.8x). "
          f"Islands at least as good on {as_good} of {len(names)} traces (target >= 8).\n")

    # Costs of the island model, for the model at 64-1024 ranks.
    name = names[0]
    ck = os.path.join(traces_dir, "islands-cost-checkpoint.json")
    j, wall, cpu = timed([args.mpirun, "-np", "2", "--oversubscribe", tailor] + common +
                         ["--migrate-every", "10", "--checkpoint", ck, "--checkpoint-every", "10", traces[name]],
                         env=MPI_ENV)
    gens = args.generations
    migrations = gens // 10
    t_gen = (j["seconds"] - j["migration_seconds"] - j["checkpoint_seconds"]) / gens
    t_mig = j["migration_seconds"] / max(1, migrations)
    t_ck = j["checkpoint_seconds"] / max(1, gens // 10)
    island_bytes = j["checkpoint_bytes"] / 2
    print(f"Costs on {name}, 2 ranks, rank 0's figures: evaluation {1000 * t_gen:.1f} ms per generation "
          f"({args.population // 2} individuals per island); migration {1000 * t_mig:.2f} ms each "
          f"(every 10 generations, waiting for the neighbour included); checkpoint {1000 * t_ck:.2f} ms each, "
          f"{island_bytes / 1024:.0f} KiB per island.\n")
    # Model: one island of the same size per rank (population = 30 x ranks),
    # ring migration (two messages per rank, independent of the ranks),
    # checkpoint gathered to rank 0 and written by it (linear in the ranks).
    latency, bandwidth, disk = 5e-6, 5e9, 1e9  # assumed cluster: 5 us, 5 GB/s network, 1 GB/s file system
    migrant_bytes = 4096
    print("| ranks | evaluation / generation | migration / generation (every 10) | checkpoint / generation "
          "(every 10) | evaluations/s, ideal | modelled | efficiency |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for ranks in (2, 64, 128, 256, 512, 1024):
        mig = (t_mig if ranks == 2 else 2 * (latency + migrant_bytes / bandwidth) + t_mig) / 10
        # measured at 2 ranks (serializing, fsync, rename), plus gathering and writing every other island
        ckpt = (t_ck + (ranks - 2) * (island_bytes / bandwidth + island_bytes / disk + latency)) / 10
        per_gen = t_gen + mig + ckpt
        ideal = ranks * (args.population // 2) / t_gen
        modelled = ranks * (args.population // 2) / per_gen
        print(f"| {ranks} | {1000 * t_gen:.1f} ms | {1000 * mig:.3f} ms | {1000 * ckpt:.2f} ms | {ideal:.0f} | "
              f"{modelled:.0f} | {100 * modelled / ideal:.1f}% |")

    if args.skip_multi:
        return
    # One DMM for the ten traces.
    j, wall, cpu = timed([args.mpirun, "-np", "2", "--oversubscribe", tailor, "search", "--json", "--threads", "1",
                          "--seed", "1", "--generations", str(args.multi_generations), "--population",
                          str(args.population), "--aggregate", "mean"] + [traces[n] for n in names], env=MPI_ENV)
    print(f"\nOne DMM for the {len(names)} traces: `mpirun -np 2 tailor search T1..T{len(names)} --aggregate mean "
          f"--generations {args.multi_generations} --population {args.population}`, {wall:.0f} s wall. "
          "Fitness normalized to Kingsley on each trace (lower is better):\n")
    cols = BUILT_INS + ["found"]
    print("| trace | " + " | ".join(cols) + " | found beats KNG |")
    print("|---|" + "---:|" * len(cols) + "---|")
    beats_kng = 0
    for name, t in zip(names, j["traces"]):
        row = {r["dmm"]: r for r in t["normalized_to_kng"]}
        beats_kng += row["found"]["fitness"] < 1
        print(f"| {name} | " + " | ".join(f"{row[d]['fitness']:.3f}" for d in cols) +
              f" | {'yes' if row['found']['fitness'] < 1 else 'no'} |")
    agg = {r["dmm"]: r for r in j["normalized_to_kng"]}
    print("| **mean** | " + " | ".join(f"**{agg[d]['fitness']:.3f}**" for d in cols) + " | |")
    better = all(agg["found"]["fitness"] < agg[d]["fitness"] for d in BUILT_INS)
    print(f"\nFound DMM better than Kingsley on {beats_kng} of {len(names)} traces; better than every classic DMM "
          f"in the aggregate: {'yes' if better else 'no'}. Found: " +
          "; ".join(f"{a['mechanism']} ({a['sizes']['min']}, {a['sizes']['max'] or 'inf'}]" for a in j["found"]["allocators"]))
    print(f"\nLoad average at the end: {' '.join(load())}")


if __name__ == "__main__":
    main()
