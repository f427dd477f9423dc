#!/usr/bin/env python3
"""The island model on MPI against one population, and one DMM for the ten
bundled workloads (issue 20's three targets). Prints markdown for
docs/BENCHMARKS.md.

1. Throughput: for each of the ten traces (search_gain.py's --small sizes,
   about 1 M events, recorded into --traces), `tailor search --threads 1`
   (one rank, one population) against `mpirun -np 2 --oversubscribe tailor
   search --threads 1` (two ranks, two islands sharing the same total
   population), against the same with `--islands 1` (one population whose
   evaluations the ranks share), and against `--islands 2` in one process
   (the two ranks' work on one core), --rounds interleaved rounds (the
   order alternates), medians.
   Evaluations per second are the search's own (evaluations / its seconds,
   trace loading and MPI start-up excluded); CPU seconds are the process
   tree's (getrusage of the children); the wall time includes everything.
2. Quality at an equal number of evaluations: the best fitness (measured on
   the whole trace) of the same two searches (deterministic: the same every round).
3. One DMM for the ten traces: `mpirun -np 2 tailor search T1..T10
   --aggregate mean`: the found DMM's fitness on each trace against
   Kingsley's (1) and, in the aggregate, against each classic DMM.
4. Costs of the island model (rank 0's figures from a 2-rank run with a
   checkpoint every 10 generations): measuring, exchange and bookkeeping
   time per generation, migration time, checkpoint time and bytes per
   island; and the modelled time per generation at 64-1024 ranks.

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
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the throughput table (0: none)")
    ap.add_argument("--generations", type=int, default=40)
    ap.add_argument("--population", type=int, default=60)
    ap.add_argument("--multi-generations", type=int, default=40, help="generations of the ten-trace search")
    ap.add_argument("--workloads", default=",".join(search_gain.SMALL_SIZES))
    ap.add_argument("--skip-multi", action="store_true")
    ap.add_argument("--share-among", type=int, default=16, help="tailor search --share-among, for the model")
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
    mpi = [args.mpirun, "-np", "2", "--oversubscribe", tailor]
    configs = {
        "1 rank": lambda t: [tailor] + common + [t],
        "2 islands, 1 process": lambda t: [tailor] + common + ["--islands", "2", t],
        "2 ranks": lambda t: mpi + common + [t],
        "2 ranks, 1 island": lambda t: mpi + common + ["--islands", "1", t],
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
    if args.rounds > 0:  # --rounds 0: the costs and the model only
        rate = lambda j, w, c: j["evaluations"] / j["seconds"]
        print("Evaluations per second (the search's own: evaluations / its seconds), and the ratio to one rank's; "
              "\"2 ranks\" is the default under mpirun (two islands of 30, one per rank), \"2 ranks, 1 island\" one "
              "population of 60 whose evaluations the two ranks share (`--islands 1`: the one-rank search, bit for bit), "
              "\"2 islands, 1 process\" the work of \"2 ranks\" on one core.\n")
        print("| workload | 1 rank | 2 islands, 1 process | 2 ranks | ratio | 2 ranks, 1 island | ratio | "
              "2 ranks / 2 islands in 1 process | allocator runs: 1 rank / 2 islands | best: 1 population / 2 islands | "
              "islands as good |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        ratios, shared_ratios, equal_work, as_good = [], [], [], 0
        for name in names:
            e1 = med(name, "1 rank", rate)
            ei = med(name, "2 islands, 1 process", rate)
            e2 = med(name, "2 ranks", rate)
            e3 = med(name, "2 ranks, 1 island", rate)
            f1 = runs[(name, "1 rank")][0][0]["normalized_to_kng"][-1]["fitness"]
            f2 = runs[(name, "2 ranks")][0][0]["normalized_to_kng"][-1]["fitness"]
            j1, j2 = runs[(name, "1 rank")][0][0], runs[(name, "2 ranks")][0][0]
            ratios.append(e2 / e1)
            shared_ratios.append(e3 / e1)
            equal_work.append(e2 / ei)
            as_good += f2 <= f1
            print(f"| {name} | {e1:.1f} | {ei:.1f} | {e2:.1f} | {e2 / e1:.2f}x | {e3:.1f} | {e3 / e1:.2f}x | {e2 / ei:.2f}x | "
                  f"{j1['allocator_simulations']} / {j2['allocator_simulations']} | {f1:.4f} | {f2:.4f} | "
                  f"{'yes' if f2 <= f1 else 'no'} |")
        summary = lambda xs: f"median {statistics.median(xs):.2f}x, {min(xs):.2f}-{max(xs):.2f}x"
        print(f"\nThroughput against one rank (target >= 1.8x): 2 ranks, 2 islands: {summary(ratios)}; "
              f"2 ranks, 1 island: {summary(shared_ratios)}. 2 ranks against the same 2 islands on one core: "
              f"{summary(equal_work)}. Islands at least as good on {as_good} of {len(names)} traces (target >= 8).\n")

    # Costs of the island model, for the model at 64-1024 ranks.
    name = names[0]
    ck = os.path.join(traces_dir, "islands-cost-checkpoint.json")
    j, wall, cpu = timed([args.mpirun, "-np", "2", "--oversubscribe", tailor] + common +
                         ["--migrate-every", "10", "--checkpoint", ck, "--checkpoint-every", "10", traces[name]],
                         env=MPI_ENV)
    gens = args.generations
    migrations = gens // 10
    sh = j["sharing"]
    t_meas = sh["measuring_seconds"] / gens      # this rank's share of the runs and assemblies
    t_breed = sh["waiting_seconds"] / gens       # its islands breeding and selecting
    t_wait = sh["exchange_seconds"] / gens       # in the exchanges: mostly waiting for the other rank
    rounds = sh["rounds"] / gens
    round_bytes = sh["bytes_sent"] / max(1, sh["rounds"])
    per_byte = sh["bookkeeping_seconds"] / max(1, 2 * sh["bytes_sent"])  # writing and reading what 2 ranks sent
    t_mig = j["migration_seconds"] / max(1, migrations)
    t_ck = j["checkpoint_seconds"] / max(1, gens // 10)
    island_bytes = j["checkpoint_bytes"] / 2
    print(f"Costs on {name}, 2 ranks, rank 0's figures per generation ({args.population // 2} individuals per "
          f"island): measuring its share {1000 * t_meas:.1f} ms, breeding {1000 * t_breed:.2f} ms, "
          f"{rounds:.1f} rounds of exchange sending {round_bytes / 1024:.1f} KiB each, "
          f"{1000 * t_wait:.1f} ms in the exchanges (waiting for the other rank included), "
          f"{1000 * sh['bookkeeping_seconds'] / gens:.2f} ms writing and reading them; migration "
          f"{1000 * t_mig:.2f} ms each (every 10 generations); checkpoint {1000 * t_ck:.2f} ms each, "
          f"{island_bytes / 1024:.0f} KiB per island.\n")
    # Model: one island of the same size per rank (population = 30 x ranks).
    # Each round every rank receives every message of its group of
    # --share-among ranks (an allgather: log2(group) latencies, group x the
    # bytes) and reads all of it; the
    # wait measured at 2 ranks is kept as the imbalance (optimistic: the
    # slowest of more ranks waits longer); migration is two messages per
    # rank; the checkpoint is gathered to rank 0 and written by it.
    latency, bandwidth, disk = 5e-6, 5e9, 1e9  # assumed cluster: 5 us, 5 GB/s network, 1 GB/s file system
    migrant_bytes = 4096
    print("| ranks | measuring / generation | exchange (transfer + reading) / generation | imbalance / generation | "
          "migration + checkpoint / generation (every 10) | evaluations/s, ideal | modelled | efficiency |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for ranks in (2, 16, 64, 128, 256, 512, 1024):
        group = min(ranks, args.share_among)  # the ranks that share evaluations
        steps = max(1, (group - 1).bit_length())
        transfer = rounds * 2 * (steps * latency + group * round_bytes / bandwidth)
        reading = rounds * group * round_bytes * per_byte
        mig = (t_mig if ranks == 2 else 2 * (latency + migrant_bytes / bandwidth) + t_mig) / 10
        ckpt = (t_ck + (ranks - 2) * (island_bytes / bandwidth + island_bytes / disk + latency)) / 10
        base = t_meas + t_breed
        per_gen = base + transfer + reading + t_wait + mig + ckpt
        ideal = ranks * (args.population // 2) / base
        modelled = ranks * (args.population // 2) / per_gen
        print(f"| {ranks} | {1000 * t_meas:.1f} ms | {1000 * (transfer + reading):.2f} ms | {1000 * t_wait:.1f} ms | "
              f"{1000 * (mig + ckpt):.2f} ms | {ideal:.0f} | {modelled:.0f} | {100 * modelled / ideal:.1f}% |")

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
