#!/usr/bin/env python3
"""The search on MPI: two ranks against one, ten traces divided among the
ranks, and the modelled cost at cluster scale (issue 40's targets). Prints
markdown for docs/BENCHMARKS.md.

1. Throughput: for each of the ten traces (search_gain.py's --small sizes,
   about 1 M events, recorded into --traces), `tailor search --threads 1`
   (one rank, run on each core alone: a virtual machine's cores need not
   be equally fast, and its figure is the mean of the two) against `mpirun -np 2 --oversubscribe tailor search --threads
   1` (two ranks sharing the evaluations of the same search: the default,
   one population), and against `--islands 2` on two ranks (the island
   model, one island per rank), --rounds interleaved rounds (the order
   alternates), medians. Evaluations per second are the search's own
   (evaluations / its seconds: the clock starts when every rank has loaded
   its traces); the wall-time ratio includes mpirun's start-up and the
   loading. The found DMM of two ranks against one rank's (the same search:
   it should be the same DMM).
2. Memory: the ten traces in one search (`--aggregate mean`,
   --multi-generations), one rank against two ranks that divide the traces
   (the default) and two that copy them (`--copy-traces`): each rank's peak
   RSS (the search's "ranks" report; one rank's from GNU time), and the
   found DMM on each trace against the classic DMMs.
3. Costs and the cluster model: rank 0's figures from a two-rank run with
   one island of 30 per rank and a checkpoint every 10 generations
   (measuring, breeding, exchange, bookkeeping per generation; migration;
   checkpoint), and the modelled throughput at 2-1024 ranks.

The load average is printed before and after: on a shared machine the
figures move; re-run on a quiet one.
"""
import argparse
import importlib.util
import json
import os
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


def timed(cmd, core=None):
    """(parsed JSON output, wall seconds, peak RSS in bytes of the largest process of the tree (GNU time));
    on `core` alone if given."""
    start = time.monotonic()
    pin = (lambda: os.sched_setaffinity(0, {core})) if core is not None else None
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, check=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=MPI_ENV, preexec_fn=pin)
    wall = time.monotonic() - start
    rss = int(p.stderr.strip().splitlines()[-1]) * 1024
    return json.loads(p.stdout), wall, rss


def timed_pair(cmd):
    """Two independent runs of `cmd` at once, one on each core: what the machine gives two processes that
    share nothing (its ceiling for two ranks). (The first's JSON with their summed evaluations per second as
    "evaluations" over one second, wall seconds of the slower.)"""
    start = time.monotonic()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=MPI_ENV,
                              preexec_fn=(lambda k=k: os.sched_setaffinity(0, {k}))) for k in (0, 1)]
    outs = [json.loads(p.communicate()[0]) for p in procs]
    if any(p.returncode != 0 for p in procs):
        raise subprocess.CalledProcessError(1, cmd)
    wall = time.monotonic() - start
    j = dict(outs[0], evaluations=sum(o["evaluations"] / o["seconds"] for o in outs), seconds=1.0)
    return j, wall, 0


def core_seconds(cores, rounds=3):
    """Median seconds of a fixed loop of arithmetic run on each of `cores` at once (the slowest): the cores
    of a virtual machine need not be equally fast, nor as fast together as alone (vCPUs whose physical
    cores other guests share), and one rank's figure depends on the core it runs on."""
    code = "s = 0\nfor i in range(5000000): s += i"
    times = []
    for _ in range(rounds):
        start = time.monotonic()
        procs = [subprocess.Popen([sys.executable, "-c", code], preexec_fn=(lambda k=k: os.sched_setaffinity(0, {k})))
                 for k in cores]
        for p in procs:
            p.wait()
        times.append(time.monotonic() - start)
    return statistics.median(times)


def found(j):
    return j["normalized_to_kng"][-1]["fitness"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--traces", default=None, help="directory of the traces (default: BUILD/search)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the throughput table (0: none)")
    ap.add_argument("--generations", type=int, default=30)
    ap.add_argument("--population", type=int, default=60)
    ap.add_argument("--multi-generations", type=int, default=10, help="generations of the ten-trace search")
    ap.add_argument("--workloads", default=",".join(search_gain.SMALL_SIZES))
    ap.add_argument("--skip-multi", action="store_true", help="no ten-trace search (memory table)")
    ap.add_argument("--skip-model", action="store_true", help="no costs and cluster model")
    ap.add_argument("--share-among", type=int, default=16, help="tailor search --share-among, for the model")
    ap.add_argument("--full", action="store_true",
                    help="the traces at search_gain.py's full sizes (3-9 M events) instead of the --small ones")
    args = ap.parse_args()

    tailor = os.path.abspath(os.path.join(args.build, "bin", "tailor"))
    traces_dir = os.path.abspath(args.traces or os.path.join(args.build, "search"))
    os.makedirs(traces_dir, exist_ok=True)
    names = args.workloads.split(",")
    traces = {}
    sizes = search_gain.SEARCH_SIZES if args.full else search_gain.SMALL_SIZES
    for name in names:
        size = sizes[name]
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
    # One rank runs once on each core per round (its figure: the mean of the two, what one rank gets on
    # this machine whichever core it is given); mpirun binds its two ranks one to each core.
    configs = {
        "1 rank, core 0": (lambda t: [tailor] + common + [t], 0),
        "1 rank, core 1": (lambda t: [tailor] + common + [t], 1),
        "2 ranks": (lambda t: mpi + common + [t], None),
        "2 ranks, 2 islands": (lambda t: mpi + common + ["--islands", "2", t], None),
        "two 1-rank searches at once": (lambda t: [tailor] + common + [t], "pair"),
    }
    speeds = [core_seconds([0]), core_seconds([1]), core_seconds([0, 1])]
    print(f"Machine: {os.cpu_count()} cores; load average before {' '.join(load_before)}; {args.rounds} "
          f"interleaved rounds, medians; population {args.population}, {args.generations} generations, "
          f"--threads 1 per rank. A fixed loop of arithmetic takes {speeds[0]:.2f} s on core 0 and "
          f"{speeds[1]:.2f} s on core 1, {speeds[2]:.2f} s on both at once.\n")
    if args.rounds > 0:
        runs = {(n, c): [] for n in names for c in configs}
        for r in range(args.rounds):
            order = list(configs) if r % 2 == 0 else list(reversed(configs))
            for name in names:
                for c in order:
                    cmd, core = configs[c][0](traces[name]), configs[c][1]
                    j, wall, _ = timed_pair(cmd) if core == "pair" else timed(cmd, core)
                    runs[(name, c)].append((j, wall))
                    print(f"[round {r + 1}] {name} {c}: {j['evaluations'] / j['seconds']:.1f} evaluations/s, "
                          f"found {found(j):.4f}, wall {wall:.1f} s", file=sys.stderr, flush=True)

        def med(name, c, f):
            return statistics.median(f(*x) for x in runs[(name, c)])

        rate = lambda j, w: j["evaluations"] / j["seconds"]
        wall_of = lambda j, w: w
        print("Evaluations per second (the search's own: evaluations / its seconds, from when every rank has "
              "loaded). One rank on each core alone, and their mean (one rank's figure: the core it gets is "
              "either); two ranks and their ratio to one; two independent one-rank searches at once, one on each "
              "core (the most two processes get from this machine: their summed evaluations per second), their "
              "ratio to one rank, and two ranks' share of it; the ratio of one rank's wall time to two ranks' "
              "(mpirun's start-up and the loading included); \"2 ranks\" is the default under mpirun (one "
              "population whose evaluations the ranks share: the one-rank search), \"2 ranks, 2 islands\" one "
              "island of 30 per rank (`--islands 2`).\n")
        print("| workload | 1 rank, core 0 | 1 rank, core 1 | 1 rank | 2 ranks | ratio | two at once | ratio | "
              "2 ranks / two at once | wall ratio | same found DMM | 2 ranks, 2 islands | ratio | "
              "islands' found / 1 rank's |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
        ratios, ceilings, shares, same, island_ratios = [], [], [], 0, []
        for name in names:
            c0, c1, e2, ei, ep = (med(name, c, rate) for c in configs)
            e1 = (c0 + c1) / 2
            w1 = (med(name, "1 rank, core 0", wall_of) + med(name, "1 rank, core 1", wall_of)) / 2
            w2 = med(name, "2 ranks", wall_of)
            j1, _, j2, ji, _ = (runs[(name, c)][0][0] for c in configs)
            ratios.append(e2 / e1)
            ceilings.append(ep / e1)
            shares.append(e2 / ep)
            island_ratios.append(ei / e1)
            same += found(j2) == found(j1)
            print(f"| {name} | {c0:.1f} | {c1:.1f} | {e1:.1f} | {e2:.1f} | {e2 / e1:.2f}x | {ep:.1f} | {ep / e1:.2f}x | "
                  f"{e2 / ep:.2f} | {w1 / w2:.2f}x | {'yes' if found(j2) == found(j1) else 'no'} | {ei:.1f} | "
                  f"{ei / e1:.2f}x | {found(ji):.4f} / {found(j1):.4f} |")
        summary = lambda xs: f"median {statistics.median(xs):.2f}x, {min(xs):.2f}-{max(xs):.2f}x"
        print(f"\nTwo ranks against one (target >= 1.8x on each): {summary(ratios)}, "
              f"{sum(x >= 1.8 for x in ratios)} of {len(names)} at 1.8x or more; two independent searches at once: "
              f"{summary(ceilings)} of one rank's, two ranks {statistics.median(shares):.2f} of that at the median "
              f"({min(shares):.2f}-{max(shares):.2f}); the same found DMM on {same} of "
              f"{len(names)} (target: as good on >= 8). Two islands on two ranks: {summary(island_ratios)}.\n")

    if not args.skip_multi:
        multi = ["search", "--json", "--threads", "1", "--seed", "1", "--generations", str(args.multi_generations),
                 "--population", str(args.population), "--aggregate", "mean"] + [traces[n] for n in names]
        j1, wall1, rss1 = timed([tailor] + multi)
        j2, wall2, _ = timed(mpi + multi)
        jc, wallc, _ = timed(mpi + multi + ["--copy-traces"])
        per_rank = lambda j: [k["peak_rss_bytes"] for k in j["ranks"]]
        mib = lambda b: f"{b / (1 << 20):.0f} MiB"
        print(f"The {len(names)} traces in one search (`tailor search T1..T{len(names)} --aggregate mean "
              f"--generations {args.multi_generations} --population {args.population} --threads 1`): peak RSS of "
              "each rank (the search's own report; one rank's from GNU time).\n")
        print("| run | traces per rank | peak RSS per rank | largest / one rank's | wall | found (mean over the traces) |")
        print("|---|---|---:|---:|---:|---:|")
        print(f"| 1 rank | {len(names)} | {mib(rss1)} | 1.00x | {wall1:.0f} s | {found(j1):.4f} |")
        for label, j, wall in (("2 ranks (traces divided)", j2, wall2), ("2 ranks, --copy-traces", jc, wallc)):
            held = " + ".join(str(len(k["traces"])) for k in j["ranks"])
            print(f"| {label} | {held} | {' + '.join(mib(b) for b in per_rank(j))} | "
                  f"{max(per_rank(j)) / rss1:.2f}x | {wall:.0f} s | {found(j):.4f} |")
        print(f"\nLargest rank of two dividing the traces: {max(per_rank(j2)) / rss1:.2f}x one rank's peak RSS "
              f"(target <= 0.6x); the same found DMM as one rank: {'yes' if found(j2) == found(j1) else 'no'}.\n")
        print("The found DMM on each trace, normalized to Kingsley (lower is better):\n")
        cols = BUILT_INS + ["found"]
        print("| trace | " + " | ".join(cols) + " | found beats KNG |")
        print("|---|" + "---:|" * len(cols) + "---|")
        beats_kng = 0
        for name, t in zip(names, j2["traces"]):
            row = {r["dmm"]: r for r in t["normalized_to_kng"]}
            beats_kng += row["found"]["fitness"] < 1
            print(f"| {name} | " + " | ".join(f"{row[d]['fitness']:.3f}" for d in cols) +
                  f" | {'yes' if row['found']['fitness'] < 1 else 'no'} |")
        agg = {r["dmm"]: r for r in j2["normalized_to_kng"]}
        print("| **mean** | " + " | ".join(f"**{agg[d]['fitness']:.3f}**" for d in cols) + " | |")
        better = all(agg["found"]["fitness"] < agg[d]["fitness"] for d in BUILT_INS)
        print(f"\nFound DMM better than Kingsley on {beats_kng} of {len(names)} traces; better than every classic "
              f"DMM in the aggregate: {'yes' if better else 'no'}. Found: " +
              "; ".join(f"{a['mechanism']} ({a['sizes']['min']}, {a['sizes']['max'] or 'inf'}]"
                        for a in j2["found"]["allocators"]) + "\n")

    if args.skip_model:
        print(f"Load average at the end: {' '.join(load())}")
        return
    # Costs of the island model at two ranks, for the model at 64-1024 ranks.
    name = names[0]
    ck = os.path.join(traces_dir, "islands-cost-checkpoint.json")
    j, wall, _ = timed(mpi + common + ["--islands", "2", "--migrate-every", "10", "--checkpoint", ck,
                                       "--checkpoint-every", "10", traces[name]])
    gens = args.generations
    migrations = gens // 10
    sh = j["sharing"]
    t_meas = (sh["measuring_seconds"] + sh["assembling_seconds"]) / gens  # its share of the runs, and the assembly
    t_breed = sh["waiting_seconds"] / gens       # its islands breeding and selecting
    t_wait = sh["exchange_seconds"] / gens       # in the exchanges and the tickets: mostly waiting for the other rank
    rounds = sh["rounds"] / gens
    units = sh["measured"] / gens                # units this rank measured per generation (one ticket each)
    round_bytes = sh["bytes_sent"] / max(1, sh["rounds"])
    per_byte = sh["bookkeeping_seconds"] / max(1, 2 * sh["bytes_sent"])  # writing and reading what 2 ranks sent
    t_mig = j["migration_seconds"] / max(1, migrations)
    t_ck = j["checkpoint_seconds"] / max(1, gens // 10)
    island_bytes = j["checkpoint_bytes"] / 2
    print(f"Costs on {name}, 2 ranks, one island of {args.population // 2} per rank, rank 0's figures per "
          f"generation: measuring its share {1000 * t_meas:.1f} ms ({units:.0f} units), breeding "
          f"{1000 * t_breed:.2f} ms, {rounds:.1f} rounds of exchange sending {round_bytes / 1024:.1f} KiB each, "
          f"{1000 * t_wait:.1f} ms in the exchanges and tickets (waiting for the other rank included), "
          f"{1000 * sh['bookkeeping_seconds'] / gens:.2f} ms writing and reading them; migration "
          f"{1000 * t_mig:.2f} ms each (every 10 generations); checkpoint {1000 * t_ck:.2f} ms each, "
          f"{island_bytes / 1024:.0f} KiB per island.\n")
    # Model: one island of the same size per rank (population = 30 x ranks).
    # Each round every rank receives every message of its group of
    # --share-among ranks (two allgathers: log2(group) latencies each, group
    # x the bytes) and reads all of it; each unit of work costs a ticket (a
    # fetch-and-add at the group's rank 0: one latency, and the group's
    # tickets of a round queue there, 0.2 us each); the wait measured at 2
    # ranks is kept as the imbalance (optimistic: the slowest of more ranks
    # waits longer); migration is two messages per rank; the checkpoint is
    # gathered to rank 0 and written by it.
    latency, bandwidth, disk, atomic = 5e-6, 5e9, 1e9, 0.2e-6  # assumed cluster network and file system
    migrant_bytes = 4096
    print("Modelled for one island of 30 per rank on a cluster (5 us latency, 5 GB/s network, 1 GB/s file system, "
          "0.2 us per remote atomic at a group's rank 0):\n")
    print("| ranks | measuring / generation | exchange (transfer + reading) / generation | tickets / generation | "
          "imbalance / generation | migration + checkpoint / generation (every 10) | evaluations/s, ideal | "
          "modelled | efficiency |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for ranks in (2, 16, 64, 128, 256, 512, 1024):
        group = min(ranks, args.share_among)  # the ranks that share evaluations
        steps = max(1, (group - 1).bit_length())
        transfer = rounds * 2 * (steps * latency + group * round_bytes / bandwidth)
        reading = rounds * group * round_bytes * per_byte
        tickets = units * (latency + group * atomic)
        mig = (t_mig if ranks == 2 else 2 * (latency + migrant_bytes / bandwidth) + t_mig) / 10
        ckpt = (t_ck + (ranks - 2) * (island_bytes / bandwidth + island_bytes / disk + latency)) / 10
        base = t_meas + t_breed
        per_gen = base + transfer + reading + tickets + t_wait + mig + ckpt
        ideal = ranks * (args.population // 2) / base
        modelled = ranks * (args.population // 2) / per_gen
        print(f"| {ranks} | {1000 * t_meas:.1f} ms | {1000 * (transfer + reading):.2f} ms | {1000 * tickets:.2f} ms | "
              f"{1000 * t_wait:.1f} ms | {1000 * (mig + ckpt):.2f} ms | {ideal:.0f} | {modelled:.0f} | "
              f"{100 * modelled / ideal:.1f}% |")
    print(f"\nLoad average at the end: {' '.join(load())}")


if __name__ == "__main__":
    main()
